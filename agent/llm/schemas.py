"""Pydantic models at the LLM boundary: what each prompt step must return."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from agent.patterns import BugPattern, Trigger

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


class TransferCheck(BaseModel):
    """Transfer step: does a pattern still make sense for a target API, and with which trigger?"""

    model_config = ConfigDict(extra="forbid")

    keep: bool
    reason: str = ""
    adapted_trigger: Trigger = Field(default_factory=Trigger)


class HarnessCode(BaseModel):
    """Harness step: input-generator code for an API the built-in generators cannot feed."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="Python source defining make_inputs(seed) -> (args, kwargs).")
    rationale: str = ""


__all__ = [
    "HarnessCode",
    "FALSE_ALARM_CLASSES",
    "ApiParameter",
    "ApiSemanticsModel",
    "BugPattern",
    "TransferCheck",
    "TriageResult",
]
