"""BugPattern and its parts: kind, the two modes, the trigger and the oracle.

Mode names are the fuzz core's vocabulary (``fuzz_core/modes``); keeping them as plain
strings here lets the pattern language load without torch.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_serializer, model_validator
from pydantic.json_schema import SkipJsonSchema


class PatternKind(StrEnum):
    JIT_Eager_Mismatch = "JIT_Eager_Mismatch"
    Compile_Eager_Mismatch = "Compile_Eager_Mismatch"
    Precision_Mismatch = "Precision_Mismatch"
    Quantization_Mismatch = "Quantization_Mismatch"
    Device_Mismatch = "Device_Mismatch"
    Layout_Mismatch = "Layout_Mismatch"
    Variant_Mismatch = "Variant_Mismatch"
    Batch_Mismatch = "Batch_Mismatch"
    Gradient_Mismatch = "Gradient_Mismatch"
    NaN_Inf = "NaN_Inf"
    Nondeterminism = "Nondeterminism"
    Exception_Mismatch = "Exception_Mismatch"
    Crash = "Crash"


KNOWN_MODES: tuple[str, ...] = (
    "eager",
    "jit.trace",
    "jit.script",
    "compile:eager",
    "compile:aot_eager",
    "compile:inductor",
    "dtype:float16",
    "dtype:bfloat16",
    "autocast:float16",
    "autocast:bfloat16",
    "layout:noncontiguous",
    "layout:channels_last",
    "variant:out",
    "variant:inplace",
    "variant:method",
    # the call with its ATen ops run as their torch._decomp decompositions (fuzz_core/modes/decomp.py)
    "variant:decomp",
    "device:cuda",
    "quant:dynamic",
    "vmap",
    "grad",
    # the gradient of the forward run through torch.compile (fuzz_core/modes/grad.py), against eager autograd
    "grad:compile:eager",
    "grad:compile:aot_eager",
    "grad:compile:inductor",
    # the gradient of the forward run on the GPU (fuzz_core/modes/grad.py), against the CPU's eager autograd
    "grad:device:cuda",
)

SpecialValue = Literal["nan", "inf", "-inf", "-0.0", "denormal", "huge", "tiny"]
ShapeCondition = Literal["empty", "zero_size", "scalar", "large", "broadcast"]
LayoutCondition = Literal["noncontiguous", "channels_last"]

_API_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_OPTION_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
OptionValue = bool | int | float | str


class Mode(BaseModel):
    """One side of the differential pair, e.g. ``compile:inductor`` with ``dynamic=True``."""

    model_config = ConfigDict(frozen=True)

    name: str
    options: dict[str, OptionValue] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in KNOWN_MODES:
            raise ValueError(f"unknown mode {value!r}; known: {', '.join(KNOWN_MODES)}")
        return value

    @field_validator("options")
    @classmethod
    def _keys(cls, value: dict[str, OptionValue]) -> dict[str, OptionValue]:
        for key in value:
            if not _OPTION_KEY_RE.match(key) or key == "mode":
                raise ValueError(f"bad mode option name {key!r}")
        return value


class Trigger(BaseModel):
    """Input conditions under which the bug shows; empty means any ordinary input.

    ``params`` hold only values within Note [Trigger parameter bounds] (fuzz_core/trigger_params.py);
    any other is dropped when the trigger is built, never an error, and ``dropped_params`` keeps
    why (parameter name -> reason), beside the trigger wherever it is stored.
    """

    model_config = ConfigDict(frozen=True)

    dtypes: list[str] = Field(default_factory=list)
    special_values: list[SpecialValue] = Field(default_factory=list)
    layout: LayoutCondition | None = None
    shape: list[ShapeCondition] = Field(default_factory=list)
    params: dict[str, str] = Field(default_factory=dict)
    # not part of any answer's schema: filled by the bounds check below
    dropped_params: SkipJsonSchema[dict[str, str]] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _bounded_params(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not data.get("params"):
            return data
        return {**data, **bounded_params(data["params"], data.get("dropped_params"))}

    @field_validator("dtypes")
    @classmethod
    def _dtype_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                raise ValueError(f"bad dtype name {name!r}")
        return value

    @model_serializer(mode="wrap")
    def _without_empty_drops(self, handler: Any) -> Any:
        """A trigger that dropped nothing dumps as it always did (stored rows, spec ids)."""
        data = handler(self)
        if isinstance(data, dict) and not data.get("dropped_params"):
            data.pop("dropped_params", None)
        return data

    def is_empty(self) -> bool:
        return not (self.dtypes or self.special_values or self.layout or self.shape or self.params)


def bounded_params(raw: Any, earlier: Any = None, *, api: str | None = None) -> dict[str, Any]:
    """``params`` and ``dropped_params`` of a trigger whose raw params were ``raw`` (Note [Trigger
    parameter bounds]); JSON numbers and lists of an answer become the text a pattern holds."""
    from fuzz_core.trigger_params import MAX_PARAMS, MAX_REASON, check_params, param_text

    dropped: dict[str, str] = {}
    if isinstance(earlier, dict):  # reasons recorded before, e.g. a stored trigger read back
        dropped.update({str(k)[:64]: str(v)[:MAX_REASON] for k, v in list(earlier.items())[:MAX_PARAMS]})
    if not isinstance(raw, dict):
        return {"params": {}, "dropped_params": {**dropped, "params": "not an object of name -> value"}}
    texts: dict[Any, Any] = {}
    for name, value in raw.items():
        text = param_text(value)
        texts[name] = text if text is not None else value
    check = check_params(texts, api=api, as_text=True)
    return {"params": check.kept, "dropped_params": {**dropped, **check.dropped}}


class OracleKind(StrEnum):
    ValueCorrectness = "ValueCorrectness"
    NaNConsistency = "NaNConsistency"
    ShapeDtypeConsistency = "ShapeDtypeConsistency"
    ExceptionConsistency = "ExceptionConsistency"
    Crash = "Crash"


# oracle kind -> the condition function printed inside OracleCheck(...)
ORACLE_CONDITIONS: dict[OracleKind, str] = {
    OracleKind.ValueCorrectness: "Compare",
    OracleKind.NaNConsistency: "SameNaN",
    OracleKind.ShapeDtypeConsistency: "SameShapeDtype",
    OracleKind.ExceptionConsistency: "SameException",
    OracleKind.Crash: "NoCrash",
}


class Oracle(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: OracleKind = OracleKind.ValueCorrectness
    tol: float | None = Field(default=None, ge=0)
    rtol: float | None = Field(default=None, ge=0)
    atol: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _tolerances_only_for_values(self) -> Oracle:
        if self.kind != OracleKind.ValueCorrectness and any(
            t is not None for t in (self.tol, self.rtol, self.atol)
        ):
            raise ValueError(f"{self.kind} takes no tolerance")
        return self


def _public_torch_api(value: str) -> str:
    """Issue text and LLM answers name the API: accept only torch's public callables (fuzz_core's rule)."""
    from fuzz_core.api_names import rejection_reason

    reason = rejection_reason(value)
    if reason is not None:
        raise ValueError(f"api {value!r} rejected: {reason}")
    return value


class BugPattern(BaseModel):
    """A reported silent bug in checkable form: kind, API, mode pair, trigger, oracle."""

    model_config = ConfigDict(frozen=True)

    kind: PatternKind
    api: str
    reference_mode: Mode
    test_mode: Mode
    trigger: Trigger = Field(default_factory=Trigger)
    oracle: Oracle = Field(default_factory=Oracle)
    repro: str = ""
    source_issue: str | None = None
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)

    @field_validator("api")
    @classmethod
    def _qualified(cls, value: str) -> str:
        if not _API_RE.match(value):
            raise ValueError(f"api must be a qualified Python name like torch.nn.functional.relu, got {value!r}")
        return _public_torch_api(value)

    @model_validator(mode="after")
    def _typed_params(self) -> BugPattern:
        """Params typed from the API's signature (Note [Trigger parameter bounds]); misfits dropped."""
        if not self.trigger.params:
            return self
        checked = bounded_params(dict(self.trigger.params), dict(self.trigger.dropped_params), api=self.api)
        if checked["params"] == self.trigger.params:
            return self
        trigger = self.trigger.model_copy(update=checked)
        object.__setattr__(self, "trigger", trigger)  # frozen: replaced once, while it is being built
        return self

    def to_formal(self, *, ascii: bool = False) -> str:
        from agent.patterns.formal import to_formal

        return to_formal(self, ascii=ascii)

    def formal_part(self) -> dict:
        """The fields the formal notation carries (metadata such as repro excluded)."""
        data = self.model_dump(include={"kind", "api", "reference_mode", "test_mode", "trigger", "oracle"})
        data["trigger"].pop("dropped_params", None)  # why params were dropped is not part of the pattern
        return data
