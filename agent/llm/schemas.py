"""Pydantic models at the LLM boundary: what each prompt step must return."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent.patterns import BugPattern, Trigger
from fuzz_core.inputs import description
from fuzz_core.spec import SPECIAL_VALUES

# The false-alarm classes of research/false_alarms.md that triage may name.
FalseAlarmClass = Literal[
    "train_mode_tracing",
    "bitwise_comparison",
    "low_precision",
    "random_ops",
    "ieee_nan",
    "ties",
    "duplicate_indices",
    "out_of_domain",
]
FALSE_ALARM_CLASSES: tuple[str, ...] = get_args(FalseAlarmClass)

ParameterRole = Literal[
    "input",
    "other_tensor",
    "weight",
    "bias",
    "padding",
    "padding_mode",
    "stride",
    "dilation",
    "kernel_size",
    "output_size",
    "dim",
    "keepdim",
    "reduction",
    "eps",
    "scale",
    "mode_flag",
    "alignment",
    "dtype",
    "out",
    "inplace",
    "index",
    "bounds",
    "scalar",
    "generator",
    "other",
]


class TriageResult(BaseModel):
    """Step 1: is this a silent-bug report with a usable repro, or a known false alarm?"""

    model_config = ConfigDict(extra="forbid")

    is_silent_bug: bool = Field(description="Wrong numbers without an error, reported as a bug.")
    has_repro: bool = Field(description="The text holds runnable code that shows the problem.")
    false_alarm_class: FalseAlarmClass | None = Field(
        default=None, description="Set when the report matches a known not-a-bug class."
    )
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    reason: str = Field(default="", description="One or two sentences: the evidence for the decision.")


class ApiParameter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    role: ParameterRole = "other"
    kind: Literal["tensor", "int", "float", "bool", "str", "tuple", "dtype", "other"] = "other"
    default: str | None = None


class ApiSemanticsModel(BaseModel):
    """Step 3: context-free description of an API, OpInfo-shaped; never the issue's scenario."""

    model_config = ConfigDict(extra="forbid")

    api: str
    category: str = "other"
    summary: str = ""
    parameters: list[ApiParameter] = Field(default_factory=list)
    input_domain: str | None = Field(default=None, description="e.g. '(-1, 1)' or 'x > 0'; None = all reals.")
    dtypes: list[str] = Field(default_factory=list)
    has_out: bool = False
    has_inplace: bool = False
    has_method: bool = False


class PatternAnswer(BaseModel):
    """Pattern step: the formal pattern, or the reason the report yields none (not an error)."""

    model_config = ConfigDict(extra="forbid")

    pattern: BugPattern | None = Field(default=None, description="The formal pattern; null when there is none.")
    no_pattern_reason: str | None = Field(
        default=None, description="Set instead of pattern when the report shows no checkable silent bug of one API."
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> PatternAnswer:
        if (self.pattern is None) == (not self.no_pattern_reason):
            raise ValueError("give either pattern or no_pattern_reason, not both and not neither")
        return self


class TransferCheck(BaseModel):
    """Transfer step: does a pattern still make sense for a target API, and with which trigger?"""

    model_config = ConfigDict(extra="forbid")

    keep: bool
    reason: str = ""
    # None (omitted) keeps the ranked candidate's trigger; an empty Trigger means "no conditions".
    adapted_trigger: Trigger | None = None


# Vocabularies of the harness-inputs step come from fuzz_core, which validates again when it runs.
TensorDtype = Literal[description.TENSOR_DTYPES]  # type: ignore[valid-type]
SpecialValue = Literal[SPECIAL_VALUES]  # type: ignore[valid-type]
TensorLayout = Literal[description.LAYOUTS]  # type: ignore[valid-type]
ArgumentKind = Literal[description.ARGUMENT_KINDS]  # type: ignore[valid-type]


class TensorInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    shape: list[int] = Field(max_length=description.MAX_RANK,
                             description=f"Sizes; at most {description.MAX_NUMEL} elements per tensor.")
    dtype: TensorDtype | None = Field(default=None, description="null: the harness's floating dtype.")
    low: float | None = Field(default=None, description="Values drawn from [low, high]; null: standard normal.")
    high: float | None = None
    special_values: list[SpecialValue] = Field(default_factory=list, description="Each placed once (floating only).")
    layout: TensorLayout = "contiguous"
    requires_grad: bool = False


class InputArgument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: ArgumentKind
    tensor: TensorInput | None = Field(default=None, description="Only for kind 'tensor'.")
    value: bool | int | float | str | list[int] | None = Field(
        default=None, description="The literal for the other kinds; strings only from torch's mode/reduction names.")


class HarnessInputs(BaseModel):
    """Harness step: a typed description of the inputs of an API the built-in generators cannot feed.

    Data only (Note [Described inputs] in fuzz_core/inputs/description.py): the answer is checked
    against fuzz_core's vocabularies and bounds here, so a failing answer gets the repair round.
    """

    model_config = ConfigDict(extra="forbid")

    args: list[InputArgument] = Field(default_factory=list, max_length=description.MAX_ARGS)
    kwargs: dict[str, InputArgument] = Field(default_factory=dict)
    constructor_kwargs: dict[str, InputArgument] = Field(
        default_factory=dict, description="nn.Module classes only: the constructor's keyword arguments (literals).")
    rationale: str = Field(default="", max_length=2000)

    @model_validator(mode="after")
    def _fits_the_fuzz_core(self) -> HarnessInputs:
        self.to_description()
        return self

    def to_description(self) -> description.InputDescription:
        """fuzz_core's dataclass for this answer; raises DescriptionError (a ValueError) with the field's path."""
        return description.InputDescription.from_dict(self.model_dump(mode="json", exclude={"rationale"}))


__all__ = [
    "HarnessInputs",
    "FALSE_ALARM_CLASSES",
    "ApiParameter",
    "ApiSemanticsModel",
    "BugPattern",
    "PatternAnswer",
    "TransferCheck",
    "TriageResult",
]
