"""A serialisable description of one harness that any worker process can rebuild."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from fuzz_core.api_names import is_code_label, rejection_reason

# "code" runs Python from the spec: only for trusted in-process callers (tests, `fuzz model`), never for
# stored or LLM-derived specs; "described" is typed data (Note [Described inputs] in inputs/description.py).
INPUT_SOURCES = ("opinfo", "signature", "code", "described")
ORACLES = ("value", "nan_inf", "exception", "shape_dtype", "crash")
SPECIAL_VALUES = ("nan", "inf", "-inf", "-0.0", "denormal", "huge", "tiny")
SHAPE_TRIGGERS = ("empty", "zero_size", "scalar", "large")
LAYOUT_TRIGGERS = ("noncontiguous", "channels_last")
# What mutation may change: "all" (values, shapes, strides, dtypes of the seeds' tensors) or "values" (every
# tensor keeps the seed's shape, dtype and strides: a compiled mode compiles once per seed structure, as a
# hand-written check on fixed-shape inputs does; Note [Value-only mutation] in fuzz_core/campaign.py).
MUTATION_SCOPES = ("all", "values")


class SpecError(ValueError):
    """A harness spec that cannot describe a runnable harness."""


@dataclass
class HarnessSpec:
    api: str
    reference_mode: str = "eager"
    test_mode: str = "eager"
    input_source: str = "opinfo"
    code: str | None = None
    mode_options: dict[str, Any] = field(default_factory=dict)
    oracle: str = "value"
    trigger: dict[str, Any] = field(default_factory=dict)
    dtype: str = "float32"
    seed: int = 0
    max_executions: int | None = None
    budget_s: float | None = None
    max_samples: int = 16  # seed inputs taken from the source before mutation starts
    kind: str = ""  # the pattern kind this harness checks, for signatures and reports
    inputs: dict[str, Any] | None = None  # the input description of input_source "described"
    mutate: str = "all"  # one of MUTATION_SCOPES

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        if not self.api or not isinstance(self.api, str):
            raise SpecError("api must be a non-empty qualified name")
        reason = rejection_reason(self.api)
        if reason is not None and not (self.input_source == "code" and is_code_label(self.api)):
            raise SpecError(f"api {self.api!r} rejected: {reason}")
        if self.input_source not in INPUT_SOURCES:
            raise SpecError(f"input_source {self.input_source!r} not in {INPUT_SOURCES}")
        if self.input_source == "code" and not self.code:
            raise SpecError("input_source 'code' needs code")
        if self.input_source == "described":
            self.input_description()
        elif self.inputs is not None:
            raise SpecError("inputs are read only by input_source 'described'")
        if self.oracle not in ORACLES:
            raise SpecError(f"oracle {self.oracle!r} not in {ORACLES}")
        if self.mutate not in MUTATION_SCOPES:
            raise SpecError(f"mutate {self.mutate!r} not in {MUTATION_SCOPES}")
        bad = [v for v in self.trigger.get("special_values", []) if v not in SPECIAL_VALUES]
        if bad:
            raise SpecError(f"unknown special values {bad}; expected some of {SPECIAL_VALUES}")
        layout = self.trigger.get("layout")
        if layout is not None and layout not in LAYOUT_TRIGGERS:
            raise SpecError(f"unknown layout trigger {layout!r}")
        bad = [v for v in self.trigger.get("shape", []) if v not in SHAPE_TRIGGERS]
        if bad:
            raise SpecError(f"unknown shape triggers {bad}; expected some of {SHAPE_TRIGGERS}")
        self._bound_params()

    def _bound_params(self) -> None:
        """Keep only trigger params within Note [Trigger parameter bounds], typed from the API's
        signature; the others are dropped (not an error) and ``trigger["dropped_params"]`` says why."""
        params = self.trigger.get("params")
        if not params:
            return
        from fuzz_core.trigger_params import check_params

        if not isinstance(params, dict):
            kept, dropped = {}, {"params": "not an object of name -> value"}
        else:
            typed_by = None if self.input_source == "code" else self.api
            kept, dropped = check_params(params, api=typed_by)
        if dropped:
            earlier = self.trigger.get("dropped_params")
            earlier = dict(earlier) if isinstance(earlier, dict) else {}
            self.trigger = {**self.trigger, "params": kept, "dropped_params": {**earlier, **dropped}}

    def input_description(self) -> Any:
        """The validated InputDescription of a "described" spec (SpecError names what is wrong)."""
        # Imported here: description.py imports this module's vocabularies.
        from fuzz_core.inputs.description import DescriptionError, InputDescription

        if self.inputs is None:
            raise SpecError("input_source 'described' needs inputs")
        try:
            return InputDescription.from_dict(self.inputs)
        except DescriptionError as exc:
            raise SpecError(f"input description: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HarnessSpec:
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise SpecError(f"unknown spec fields: {sorted(unknown)}")
        return cls(**data)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), default=str)

    @property
    def spec_id(self) -> str:
        """Content hash of everything that changes what the harness does (budgets excluded)."""
        data = self.to_dict()
        for key in ("max_executions", "budget_s"):
            data.pop(key)
        if data["inputs"] is None:  # specs without a description keep the ids they had before it existed
            data.pop("inputs")
        if data["mutate"] == "all":  # nor do specs that mutate everything, as every spec did before the field
            data.pop("mutate")
        blob = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]
