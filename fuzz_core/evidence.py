"""A harness's evidence as a typed object (stored as JSON through to_dict/from_dict), and the helpers that
fill it: backend ablation, torch config, input description."""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from fuzz_core.execution import execute
from fuzz_core.inputs import Sample
from fuzz_core.modes import get_mode
from fuzz_core.oracles import compare_outputs
from fuzz_core.target import Target
from fuzz_core.tensors import tensor_leaves

ABLATION_BACKENDS = ("compile:eager", "compile:aot_eager", "compile:inductor")

# Note [Recorded checks]
# Every confirmation check that runs on a finding's input writes its own outcome (fuzz_core/confirm.py:
# run_checks for the value checks, the confirm_* functions for exception, structure and NaN/Inf findings);
# a check that was never reached is absent. Reviews and reports print these records as they are and
# never infer a check's outcome from the verdict: a finding stored before the records existed says so.
#   held     the check ran and the difference survived it
#   failed   the check ran and the difference did not survive it (ruled out as noise, did not reproduce, ...)
#   skipped  the check does not apply to this input or mode (the detail says why)
#   decided  the check itself chose the verdict (the figures name it)
#   error    the check raised: the finding is not confirmed
CheckStatus = Literal["held", "failed", "skipped", "decided", "error"]
CHECK_STATUSES: tuple[str, ...] = ("held", "failed", "skipped", "decided", "error")


@dataclass
class CheckOutcome:
    """One confirmation check as it ran on the finding's input (Note [Recorded checks])."""

    check: str  # the check's name: the function's name for the value checks
    status: CheckStatus
    detail: str = ""
    figures: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "status": self.status, "detail": self.detail,
                "figures": {str(k): plain_value(v) for k, v in self.figures.items()}}

    @classmethod
    def from_dict(cls, data: Any) -> CheckOutcome:
        """Read a stored record; anything malformed is kept visible as such, never dropped or guessed."""
        if not isinstance(data, dict):
            return cls("unreadable record", "error", f"stored check record is not an object: {str(data)[:200]}")
        status = data.get("status")
        figures = data.get("figures")
        return cls(str(data.get("check", "?")),
                   status if status in CHECK_STATUSES else "error",  # type: ignore[arg-type]
                   str(data.get("detail", "")) if status in CHECK_STATUSES else f"unknown status {status!r}",
                   dict(figures) if isinstance(figures, dict) else {})


def plain_value(value: Any) -> Any:
    """A JSON-ready copy of a figure: numbers (inf/nan as strings), strings, lists and dicts of those."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, torch.Tensor):
        return plain_value(value.item()) if value.numel() == 1 else f"tensor of shape {list(value.shape)}"
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain_value(v) for k, v in value.items()}
    return str(value)[:300]



@dataclass
class Evidence:
    """What a verdict rests on. Every field is JSON-ready; `extra` holds check-specific details.

    to_dict() is flat (the keys reports and review pages read: max_abs_diff, tolerance, backend_ablation,
    first_divergent_op, backend_bisection, ...) and leaves out fields that were never set.
    """

    torch_version: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    modes: list[str] = field(default_factory=list)
    dtype: str = ""
    # the campaign
    input_source: str | None = None
    random_op: bool | None = None
    seeds: int | None = None
    passed: int | None = None
    invalid_inputs: int | None = None
    not_applicable_inputs: int | None = None
    fp64_accepted: int | None = None
    rounding_accepted: int | None = None
    notes: list[str] | None = None
    # throughput and the signals the adaptive budget reads
    compile_s: float | None = None
    execute_s: float | None = None
    compiles: int | None = None
    closeness: float | None = None
    nonfinite_outputs: int | None = None
    coverage: dict[str, Any] | None = None
    instrument: str | None = None
    # the mismatch
    location: str | None = None
    mismatch_kind: str | None = None
    detail: str | None = None
    max_abs_diff: Any = None
    max_rel_diff: Any = None
    mismatch_count: int | None = None
    first_index: list[int] | None = None  # in the coordinates of the output leaf `location`, of shape output_shape
    output_shape: list[int] | None = None
    tolerance: dict[str, float] | None = None
    ref_error_vs_fp64: Any = None
    test_error_vs_fp64: Any = None
    fp64_detail: str | None = None
    # the input and where the divergence starts
    input: dict[str, Any] | None = None
    recipe: dict[str, Any] | None = None
    backend_ablation: dict[str, str] | None = None
    first_divergent_op: dict[str, Any] | None = None
    backend_bisection: dict[str, Any] | None = None
    instrumentation: dict[str, Any] | None = None
    localisation_error: str | None = None
    # artifacts
    inputs_path: str | None = None
    outputs_path: str | None = None  # reference/test/fp64 at the differing leaf (fuzz_core/saved_outputs.py)
    outputs_skipped: str | None = None
    repro_path: str | None = None
    harness_path: str | None = None
    repro_skipped: str | None = None
    # the confirmation checks that ran, in order (Note [Recorded checks]); None: not recorded (older finding)
    checks: list[CheckOutcome] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def update(self, values: dict[str, Any]) -> None:
        """Set known fields by name; anything else goes to `extra`."""
        known = _FIELDS
        for key, value in values.items():
            if key == "checks":
                self.checks = None if value is None else [
                    c if isinstance(c, CheckOutcome) else CheckOutcome.from_dict(c)
                    for c in (value if isinstance(value, list) else [value])]
            elif key in known and key != "extra":
                setattr(self, key, value)
            else:
                self.extra[key] = value

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "extra":
                continue
            value = getattr(self, f.name)
            if f.name == "checks" and value is not None:
                out[f.name] = [c.to_dict() for c in value]
            elif value is not None:
                out[f.name] = json_number(value)
        out.update({k: json_number(v) for k, v in self.extra.items() if k not in out})
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Evidence:
        evidence = cls()
        evidence.update(dict(data))
        return evidence


def json_number(value: Any) -> Any:
    """JSON has no inf/nan: write them as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


_FIELDS = {f.name for f in dataclasses.fields(Evidence)}

# The typed fields that describe the finding's failing input and what ran on it (not the campaign): when a
# minimised input becomes the finding's one input, these move under "original" and are measured anew
# (Note [One input per finding] in fuzz_core/minimise_finding.py). The Finding's own details join them.
FINDING_FIELDS: frozenset[str] = frozenset({
    "location", "mismatch_kind", "detail", "max_abs_diff", "max_rel_diff", "mismatch_count", "first_index",
    "output_shape", "tolerance", "ref_error_vs_fp64", "test_error_vs_fp64", "fp64_detail", "input", "recipe",
    "backend_ablation", "first_divergent_op", "backend_bisection", "instrumentation", "localisation_error",
    "inputs_path", "outputs_path", "outputs_skipped", "repro_path", "harness_path", "repro_skipped", "checks",
})


def backend_ablation(target: Target, sample: Sample, options: dict[str, Any], reseed: int | None,
                     test_mode: str = "compile:inductor") -> dict[str, str]:
    """Which compile backends differ from eager on this input: 'matches', 'differs' or 'raises: ...'."""
    reference = execute(get_mode("eager"), target, sample, reseed=reseed)
    verdicts: dict[str, str] = {}
    names = ABLATION_BACKENDS + ((test_mode,) if test_mode not in ABLATION_BACKENDS else ())
    for name in names:
        run = execute(get_mode(name, options), target, sample, reseed=reseed)
        if run.status != "ok":
            verdicts[name.split(":", 1)[1]] = f"raises: {run.error_text}" if run.status == "exc" else "not applicable"
            continue
        same = compare_outputs(reference.output, run.output, returns_indices=target.returns_indices,
                               inputs=tensor_leaves(sample.tree())).ok
        verdicts[name.split(":", 1)[1]] = "matches" if same else "differs"
    return verdicts


def config_flags() -> dict[str, Any]:
    flags: dict[str, Any] = {
        "num_threads": torch.get_num_threads(),
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "default_dtype": str(torch.get_default_dtype()),
        "cuda_available": torch.cuda.is_available(),
    }
    try:
        import torch._inductor.config as inductor_config

        flags["inductor.fallback_random"] = inductor_config.fallback_random
    except Exception:  # pragma: no cover - inductor always ships with torch >= 2.0
        pass
    if os.environ.get("OMP_NUM_THREADS"):
        flags["OMP_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"]
    return flags


def describe_sample(sample: Sample) -> dict[str, Any]:
    return {
        "origin": sample.origin,
        "tensors": [{"shape": list(t.shape), "dtype": str(t.dtype), "stride": list(t.stride()),
                     "contiguous": t.is_contiguous()} for t in tensor_leaves(sample.tree())],
        "ctor": sample.ctor,
    }
