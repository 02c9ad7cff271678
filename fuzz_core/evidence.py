"""A harness's evidence as a typed object (stored as JSON through to_dict/from_dict), and the helpers that
fill it: backend ablation, torch config, input description.

Importing this module does not import torch (the helpers do, when called): the CLI's review and export
commands read evidence through it and stay cheap to start.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import sys
import types
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, Union

if TYPE_CHECKING:
    from fuzz_core.inputs import Sample
    from fuzz_core.target import Target

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
    torch = sys.modules.get("torch")  # a tensor exists only once torch is imported
    if torch is not None and isinstance(value, torch.Tensor):
        return plain_value(value.item()) if value.numel() == 1 else f"tensor of shape {list(value.shape)}"
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain_value(v) for k, v in value.items()}
    return str(value)[:300]


# Note [Typed evidence]
# Evidence is stored as JSON (to_dict) and read back with Evidence.from_dict: readers (agent/review,
# agent/export, agent/web, the CLI) use the typed fields and records below, never raw keys, so this
# module is the one place that knows how evidence is spelled. The nested objects fuzz_core stores as
# dicts are read into StoredRecord subclasses: `minimised` (Minimised, with MeasuredFigures and Shrink),
# `original` (Original) and `localisation` (Localisation); dict-valued fields that fuzz_core assigns
# directly (input, tolerance, first_divergent_op, backend_bisection) have typed views (described_input,
# tolerance_used, divergent_op, bisection). A key an older row lacks, or stored with another type, reads
# None: the caller says so.

R = TypeVar("R", bound="StoredRecord")


def _accepts(hint: Any, value: Any) -> bool:
    """Whether a stored JSON value fits a field's annotation (Any, X | None, list[...], dict[...], records)."""
    if hint is Any or hint is object:
        return True
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(_accepts(arg, value) for arg in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is not None:
        hint = origin
    if hint in (int, float) and isinstance(value, bool):
        return False
    if hint is float:
        return isinstance(value, (int, float))
    return isinstance(hint, type) and isinstance(value, hint)


class StoredRecord:
    """A JSON object fuzz_core stored inside the evidence, read into the typed fields of a dataclass subclass.

    Keys the subclass does not name stay in `extra`; a named key stored as null or with a type its field does
    not accept stays in `extra` too (the field reads None), so to_dict() gives back the object as stored.
    NESTED names the fields that hold records of their own.
    """

    NESTED: ClassVar[dict[str, type[StoredRecord]]] = {}
    extra: dict[str, Any]

    @classmethod
    def _hints(cls) -> dict[str, Any]:
        return _field_hints(cls)

    @classmethod
    def from_dict(cls: type[R], data: Any) -> R | None:
        """The record, or None when `data` is not an object (an older or damaged row)."""
        if not isinstance(data, dict):
            return None
        hints = cls._hints()
        values: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            key = str(key)
            nested = cls.NESTED.get(key)
            if key in hints and nested is not None and isinstance(value, dict):
                values[key] = nested.from_dict(value)
            elif key in hints and nested is None and value is not None and _accepts(hints[key], value):
                values[key] = value
            else:
                extra[key] = value
        record = cls(**values)  # type: ignore[call-arg]
        record.extra = extra
        return record

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.name == "extra" or value is None:
                continue
            if isinstance(value, list):
                value = [v.to_dict() if isinstance(v, StoredRecord) else v for v in value]
            out[f.name] = value.to_dict() if isinstance(value, StoredRecord) else value
        out.update({k: v for k, v in self.extra.items() if k not in out})
        return out


@functools.cache
def _field_hints(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(cls) if f.name != "extra"}


@dataclass
class TensorDescription(StoredRecord):
    """One tensor of an input description (describe_sample)."""

    shape: list[Any] | None = None
    dtype: str | None = None
    stride: list[Any] | None = None
    contiguous: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class InputDescription(StoredRecord):
    """describe_sample's record of an input. `tensors` keeps one entry per stored item: None for an item that
    is not an object; the list itself is None when the row holds none (read-only view, not written back)."""

    origin: str | None = None
    tensors: list[TensorDescription | None] | None = None
    ctor: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Any) -> InputDescription | None:
        record = super().from_dict(data)
        if record is not None and isinstance(record.tensors, list):
            record.tensors = [TensorDescription.from_dict(t) for t in record.tensors]
        return record


@dataclass
class Tolerance(StoredRecord):
    """The rtol/atol a comparison used (Evidence.tolerance)."""

    rtol: float | None = None
    atol: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class DivergentOp(StoredRecord):
    """The first op (or module) whose outputs differ between the modes (fuzz_core/localise.py: Divergence)."""

    level: str | None = None
    index: int | None = None
    name: str | None = None
    module_type: str | None = None
    max_abs_diff: Any = None
    max_rel_diff: Any = None
    introduced: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Bisection(StoredRecord):
    """Which compile stage first differs (fuzz_core/localise.py: BackendBisection)."""

    first_bad_backend: str | None = None
    stage: Any = None
    per_backend: dict[str, Any] | None = None
    compiler_bisector: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class MeasuredFigures(StoredRecord):
    """Both modes' outputs and the float64 value on the smallest input, each error computed for the mode it
    names (fuzz_core/minimise_finding.py: measured_figures); or why they were not measured."""

    output: str | None = None
    reference_mode: str | None = None
    test_mode: str | None = None
    reference_values: list[Any] | None = None
    test_values: list[Any] | None = None
    float64_values: list[Any] | None = None
    output_dtype: str | None = None
    reference_error_vs_fp64: Any = None
    test_error_vs_fp64: Any = None
    figures_skipped: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Shrink(StoredRecord):
    """What the shrink achieved (fuzz_core/minimise.py: ShrinkStats)."""

    elements_before: int | None = None
    elements_after: int | None = None
    dims_before: int | None = None
    dims_after: int | None = None
    tries: int | None = None
    accepted: int | None = None
    elapsed_s: float | None = None
    exit_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Minimised(StoredRecord):
    """evidence["minimised"]: the smallest failing input, its figures and the short repro, or why there are
    none (fuzz_core/minimise_finding.py)."""

    NESTED: ClassVar[dict[str, type[StoredRecord]]] = {}  # filled below: figures, shrink

    failure_key: str | None = None
    inputs_path: str | None = None
    input: dict[str, Any] | None = None
    shrink: Shrink | None = None
    figures: MeasuredFigures | None = None
    short_repro: str | None = None
    short_repro_path: str | None = None
    short_repro_exit: int | None = None  # None also when it was killed by its timeout
    short_repro_output: str | None = None
    short_repro_lines: int | None = None
    short_repro_skipped: str | None = None
    adopted: bool | None = None
    adopt_skipped: str | None = None
    skipped: str | None = None
    error: str | None = None
    traceback: str | None = None
    elapsed_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def described_input(self) -> InputDescription | None:
        return InputDescription.from_dict(self.input)


Minimised.NESTED = {"figures": MeasuredFigures, "shrink": Shrink}


@dataclass
class Localisation(StoredRecord):
    """evidence["localisation"] of a model fuzz report (fuzz_core/cgf/model.py: localise_failure)."""

    first_divergent_op: dict[str, Any] | None = None
    first_divergent_module: dict[str, Any] | None = None
    backend_bisection: dict[str, Any] | None = None
    first_nonfinite_op: dict[str, Any] | None = None
    first_nonfinite_module: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def divergent_op(self) -> DivergentOp | None:
        return DivergentOp.from_dict(self.first_divergent_op)


@dataclass
class Original(StoredRecord):
    """evidence["original"]: what the fuzzer first found before the smallest input became the finding's one input
    (Note [One input per finding] in fuzz_core/minimise_finding.py): its reason and, in `extra`, the
    input-specific evidence keys as they were; `evidence` reads those typed."""

    reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def evidence(self) -> Evidence:
        return Evidence.from_dict(self.extra)


@dataclass
class Evidence:
    """What a verdict rests on. Every field is JSON-ready; `extra` holds check-specific details.

    to_dict() is flat (max_abs_diff, tolerance, backend_ablation, first_divergent_op, backend_bisection, ...)
    and leaves out fields that were never set. Readers go through from_dict (Note [Typed evidence]).
    """

    # nested objects stored as dicts, read into records by update()/from_dict
    NESTED: ClassVar[dict[str, type[StoredRecord]]] = {}

    torch_version: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    modes: list[str] = field(default_factory=list)
    dtype: str = ""
    # the campaign
    input_source: str | None = None
    random_op: bool | None = None
    seeds: int | None = None
    executions: int | None = None  # inputs run, rejected and not applicable ones included
    compared: int | None = None  # inputs both modes ran and that were compared (Note [Earned passes])
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
    # the shrink of a confirmed finding, and what was first found when its smallest input was adopted
    # (fuzz_core/minimise_finding.py); where a model fuzz report's failure starts (fuzz_core/cgf/model.py)
    minimised: Minimised | None = None
    original: Original | None = None
    localisation: Localisation | None = None
    # keys that older or hand-made records carry; fuzz_core does not write them today
    observed: Any = None  # the value the test mode gave, as a report states it
    expected: Any = None  # the value it should have given
    default_tolerances: bool | None = None  # False: the comparison did not use torch.testing's defaults
    fallback_random: bool | None = None  # torch._inductor.config.fallback_random, recorded at the top level
    config_flags: dict[str, Any] | None = None  # older name of `config`
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, data: Evidence | dict[str, Any] | None) -> Evidence:
        """Typed evidence from a stored dict (or itself); anything else reads as evidence that records nothing."""
        if isinstance(data, Evidence):
            return data
        return cls.from_dict(data) if isinstance(data, dict) else cls()

    # Typed views of the dict-valued fields fuzz_core assigns directly (None when absent or not an object).
    @property
    def described_input(self) -> InputDescription | None:
        return InputDescription.from_dict(self.input)

    @property
    def tolerance_used(self) -> Tolerance | None:
        return Tolerance.from_dict(self.tolerance)

    @property
    def divergent_op(self) -> DivergentOp | None:
        return DivergentOp.from_dict(self.first_divergent_op)

    @property
    def bisection(self) -> Bisection | None:
        return Bisection.from_dict(self.backend_bisection)

    @property
    def adopted_minimised(self) -> bool:
        """True when the smallest input became the finding's one input (what was first found is `original`)."""
        return self.original is not None

    def update(self, values: dict[str, Any]) -> None:
        """Set known fields by name; anything else goes to `extra`."""
        known = _FIELDS
        for key, value in values.items():
            nested = self.NESTED.get(key)
            if key == "checks":
                self.checks = None if value is None else [
                    c if isinstance(c, CheckOutcome) else CheckOutcome.from_dict(c)
                    for c in (value if isinstance(value, list) else [value])]
            elif nested is not None and isinstance(value, (dict, nested)):
                setattr(self, key, nested.from_dict(value) if isinstance(value, dict) else value)
                self.extra.pop(key, None)
            elif nested is not None:  # null or not an object: kept as stored, the typed field reads None
                setattr(self, key, None)
                self.extra[key] = value
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
            elif isinstance(value, StoredRecord):
                out[f.name] = value.to_dict()
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
EVIDENCE_FIELDS: frozenset[str] = frozenset(_FIELDS - {"extra"})  # the names of the typed fields
Evidence.NESTED = {"minimised": Minimised, "original": Original, "localisation": Localisation}

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
    from fuzz_core.execution import execute
    from fuzz_core.modes import get_mode
    from fuzz_core.oracles import compare_outputs
    from fuzz_core.tensors import tensor_leaves

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
    import torch

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
    from fuzz_core.tensors import tensor_leaves

    return {
        "origin": sample.origin,
        "tensors": [{"shape": list(t.shape), "dtype": str(t.dtype), "stride": list(t.stride()),
                     "contiguous": t.is_contiguous()} for t in tensor_leaves(sample.tree())],
        "ctor": sample.ctor,
    }
