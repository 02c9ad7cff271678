"""The confirmation checks (DESIGN.md's five, plus rounding depth and overflow edge), one named function each.

A difference the engine found becomes a Finding only through these checks. Each check either passes
the candidate on (None), rules it out ("noise": ordinary rounding or fp64 says the test mode is not
worse), or decides it (a Finding). A check that raises never confirms: `run_checks` turns any
exception into `suspicious` naming the check and the error (a skipped check must not confirm).
Every check that runs records its outcome in the finding's details["checks"] (Note [Recorded checks]
in fuzz_core/evidence.py); a check may return `Skipped(reason)` to say it does not apply here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from fuzz_core import result as V
from fuzz_core.evidence import CheckOutcome
from fuzz_core.execution import Execution, execute_fp64
from fuzz_core.inputs import Sample
from fuzz_core.mutators import CorpusEntry
from fuzz_core.oracles import (
    amplification,
    compare_outputs,
    inputs_finite,
    judge_leaf,
    perturbation_overflows,
    unexpected_nonfinite,
)
from fuzz_core.oracles.compare import Mismatch
from fuzz_core.oracles.defined_input import duplicate_write, probability_outside, selects_between_branches
from fuzz_core.oracles.low_precision import (
    ACCUMULATING_WRITES,
    EDGE_FACTOR,
    FLOAT_ACCUMULATING_REDUCTIONS,
    SCAN_OPS,
    VARIANCE_REDUCTIONS,
    accumulation_depth,
    beyond_range,
    edge_overflow,
    intermediate_bound,
    low_dtype_of,
    nonfinite_where_answer_fits,
    scan_prefix_bound,
    unrepresentable_parameters,
    variance_accumulator_bound,
)
from fuzz_core.oracles.tolerance import rounding_allowance_ulps
from fuzz_core.oracles.value_classes import describe_nonfinite, nonfinite_disagreements
from fuzz_core.tensors import map_tensors, output_leaves, tensor_leaves

if TYPE_CHECKING:
    from fuzz_core.campaign import Campaign

# A perturbation at rounding level that moves the reference by this fraction of the observed
# difference means the input is ill-conditioned: the difference is amplification, not a bug.
AMPLIFICATION_FRACTION = 0.5


@dataclass
class Finding:
    """A failure found on one input, after the confirmation checks."""

    verdict: str
    key: str
    reason: str
    entry: CorpusEntry
    mismatch: Mismatch | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Skipped:
    """A check's answer when it does not apply to this input or mode: recorded as skipped, the next check runs."""

    reason: str


# None: this check ran and passes the candidate on to the next; a str rules the difference out ("noise").
Outcome = Finding | Skipped | str | None

CHECKS_KEY = "checks"  # Finding.details[CHECKS_KEY]: list[CheckOutcome] (Note [Recorded checks])


def recorded(details: dict[str, Any]) -> list[CheckOutcome]:
    """The list of check outcomes kept in a finding's details (created empty on first use)."""
    return details.setdefault(CHECKS_KEY, [])


def _about(check: Callable[..., Any]) -> str:
    """The first sentence of a check's docstring (without DESIGN.md's check number): what it asks, said where it held."""
    text = " ".join((check.__doc__ or "").split())
    text = re.sub(r"^\d+\.\s*", "", text)
    match = re.match(r"(.+?[.?!])(\s|$)", text)
    return match.group(1) if match else text


def _new_figures(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The details a check added or replaced: its figures."""
    return {k: v for k, v in after.items() if k != CHECKS_KEY and (k not in before or before[k] is not v)}


@dataclass
class ValueCase:
    """What the value checks share: the input, both outputs, the mismatch and the fp64 judgement so far."""

    entry: CorpusEntry
    ref: Execution
    test: Execution
    mismatch: Mismatch
    details: dict[str, Any] = field(default_factory=dict)
    ref_leaf: torch.Tensor | None = None
    test_leaf: torch.Tensor | None = None
    fp64_leaf: torch.Tensor | None = None
    fp64_out: Any = None

    @property
    def sample(self) -> Sample:
        return self.entry.sample

    @property
    def key(self) -> str:
        return f"value:{self.mismatch.path}"

    def finding(self, verdict: str, reason: str) -> Finding:
        return Finding(verdict, self.key, reason, self.entry, self.mismatch, self.details)


def largest_finite(t: torch.Tensor) -> float | None:
    """The largest finite magnitude of a floating tensor, or None (not floating, empty, nothing finite)."""
    if not t.is_floating_point() or not t.numel():
        return None
    finite = t[torch.isfinite(t)]
    return float(finite.abs().max()) if finite.numel() else None


def near_overflow(sample: Sample) -> bool:
    """Some floating input is beyond sqrt(max) of its dtype: a product of two such values overflows."""
    for t in tensor_leaves(sample.tree()):
        top = largest_finite(t)
        if top is not None and top > math.sqrt(torch.finfo(t.dtype).max):
            return True
    return False


def near_underflow(sample: Sample) -> float | None:
    """The smallest nonzero magnitude of a floating input below sqrt(tiny) of its dtype, else None: its reciprocal
    squared (a gradient's 1/x^2, x^(p-1) with p < 1) overflows the dtype (Note [Gradients at tiny inputs])."""
    smallest = None
    for t in tensor_leaves(sample.tree()):
        if t.is_floating_point() and t.numel():
            magnitudes = t[torch.isfinite(t) & (t != 0)].abs()
            if magnitudes.numel():
                low = float(magnitudes.min())
                if low < math.sqrt(torch.finfo(t.dtype).tiny) and (smallest is None or low < smallest):
                    smallest = low
    return smallest


def _lift_tiny(t: torch.Tensor) -> torch.Tensor:
    if not t.is_floating_point():
        return t
    info = torch.finfo(t.dtype)
    tiny = torch.isfinite(t) & (t != 0) & (t.abs() < math.sqrt(info.tiny))
    return torch.where(tiny, torch.copysign(torch.full_like(t, info.eps), t), t) if bool(tiny.any()) else t


def nonfinite_without_tiny(h: Campaign, sample: Sample, fp64_out: Any) -> bool:
    """The test mode still gives an unexpected NaN/Inf once every tiny input is lifted to the dtype's eps, a
    magnitude whose small negative powers the dtype holds: the tiny values are not what makes it (a failed run
    counts as not, so the tiny values keep the blame)."""
    assert h.test is not None
    lifted = sample.with_tree(map_tensors(sample.tree(), _lift_tiny))
    again = h.run_mode(h.test, lifted)
    return again.status == "ok" and unexpected_nonfinite(again.output, fp64_out) is not None


# Note [Gradients at tiny inputs]
# An analytic gradient raises its input to negative powers (1/x^2 for a reciprocal, |x|^(p-1) for a p-norm with
# p < 1). At a nonzero input below sqrt of the dtype's smallest normal those powers leave float32's range while
# float64 holds them: torch.norm(x, p=-1.5) on [0, 1e-30] has a float32 gradient of NaN (0 * inf) and a float64
# gradient of 0. That is the dtype's range, the mirror of inputs beyond sqrt(max), and a maintainer reads it as a
# robustness wish at best: the finding is at most suspicious. The tiny values must be the cause: with each lifted
# to the dtype's eps (same sign) the gradient must come out finite. An exact zero is not tiny (the NaN gradient of a norm at 0
# stays a bug), and the rule reads the analytic gradient modes only.
GRADIENT_TEST_MODES = ("grad", "grad:compile:")


def drops_nonfinite(ref: torch.Tensor, test: torch.Tensor) -> bool:
    """The test output is finite somewhere the reference is NaN/Inf (lost propagation)."""
    if not (ref.is_floating_point() and test.is_floating_point()) or ref.shape != test.shape:
        return False
    return bool((~torch.isfinite(ref) & torch.isfinite(test)).any())


def test_only_infinity(ref: torch.Tensor, test: torch.Tensor, fp64: torch.Tensor) -> torch.Tensor:
    """Positions where only the test mode is non-finite while the true (fp64) result is finite and
    representable in the output dtype: overflow the math does not demand."""
    if not (ref.is_floating_point() and test.is_floating_point() and fp64.is_floating_point()) or not (
            ref.shape == test.shape == fp64.shape):
        return torch.zeros((), dtype=torch.bool)
    limit = torch.finfo(test.dtype).max
    return ~torch.isfinite(test) & torch.isfinite(ref) & torch.isfinite(fp64) & (fp64.double().abs() <= limit)


def run_checks(checks: list[Callable[[Campaign, ValueCase], Outcome]], h: Campaign, case: ValueCase) -> Finding | str:
    """Run the checks in order; the first decision wins; an exception in any check is `suspicious`.
    Each check that runs leaves its outcome, with the figures it added to the details, in
    details["checks"]; checks after the decision are not run and not recorded."""
    outcomes = recorded(case.details)
    for check in checks:
        name = check.__name__
        before = dict(case.details)
        try:
            outcome = check(h, case)
        except Exception as exc:  # noqa: BLE001 - a failed check must never let a finding through
            case.details["failed_check"] = name
            error = f"{type(exc).__name__}: {str(exc)[:200]}"
            outcomes.append(CheckOutcome(name, "error", f"could not run ({error})", _new_figures(before, case.details)))
            return case.finding(V.SUSPICIOUS, f"confirmation check {name} could not run ({error}); not confirmed")
        figures = _new_figures(before, case.details)
        if outcome is None:
            outcomes.append(CheckOutcome(name, "held", _about(check), figures))
        elif isinstance(outcome, Skipped):
            outcomes.append(CheckOutcome(name, "skipped", outcome.reason, figures))
        elif isinstance(outcome, str):
            outcomes.append(CheckOutcome(name, "failed", f"the difference is ruled out ({outcome})", figures))
            return outcome
        else:
            if outcome.details is case.details:
                outcomes.append(CheckOutcome(name, "decided", outcome.reason, {**figures, "verdict": outcome.verdict}))
            else:  # the check handed the input to a fresh evaluation (e.g. under a reseeded RNG): its checks follow
                outcomes.append(CheckOutcome(name, "decided", "the input was evaluated again; that evaluation's "
                                             "checks follow", {**figures, "verdict": outcome.verdict}))
                outcome.details[CHECKS_KEY] = outcomes + list(outcome.details.get(CHECKS_KEY) or [])
            return outcome
    return confirmed_value(h, case)


# -- value checks, in order ------------------------------------------------------------------------
def check_reference_deterministic(h: Campaign, case: ValueCase) -> Outcome:
    """2. The reference gives the same output twice (else a random op the RNG probe missed, or noise)."""
    again = h.run_mode(h.reference, case.sample)
    if again.status == "ok" and compare_outputs(case.ref.output, again.output).ok:
        return None
    if not h.random_op:
        h.random_op = True  # compare again under a reseeded RNG
        return h.evaluate(case.entry)
    return case.finding(V.SUSPICIOUS, "the reference mode is not deterministic on this input")


def check_reproducible(h: Campaign, case: ValueCase) -> Outcome:
    """1. The test mode's difference reproduces on a re-run."""
    again = h.run_mode(h.test, case.sample)
    if again.status != "ok" or h.compare(case.ref.output, again.output, case.sample).ok:
        return case.finding(V.FLAKY, "the difference did not reproduce on re-run")
    return None


def check_defined_input(h: Campaign, case: ValueCase) -> Outcome:
    """5. The input is inside what the API defines: no duplicate indices in a write that does not accumulate, no
    probability target outside [0, 1] (Note [Undefined writes and leaking branches])."""
    assert h.target is not None
    args, kwargs = case.sample.args, case.sample.kwargs
    why = duplicate_write(h.target.short_name, args, kwargs) or probability_outside(h.target.short_name, args, kwargs)
    if why is None:
        return None
    return case.finding(V.SUSPICIOUS, why)


def check_gradient_leak(h: Campaign, case: ValueCase) -> Outcome:
    """Gradients: a NaN/Inf analytic gradient where the other side is finite, in a composite that selects with
    where/masked_fill, is the unselected branch leaking (a documented limitation), at most suspicious."""
    assert h.test is not None and h.reference is not None
    ref, test = case.ref_leaf, case.test_leaf
    if not h.test.name.startswith("grad") or h.test.name == "grad:numeric":
        return Skipped("not an analytic gradient mode")
    assert ref is not None and test is not None
    if ref.shape != test.shape or not bool((~torch.isfinite(test) & torch.isfinite(ref)).any()):
        return Skipped("no NaN/Inf gradient where the other side is finite")
    graph, _ = h.composite(case.sample)
    if not selects_between_branches(graph):
        return None
    return case.finding(V.SUSPICIOUS, f"{h.test.name} is NaN/Inf where {h.reference.name} is finite, in a "
                                      "composite that selects with where/masked_fill: a NaN/Inf in the branch not "
                                      "taken leaks into the gradient (documented autograd limitation)")


def check_fp64(h: Campaign, case: ValueCase) -> Outcome:
    """4. The test mode is further from the float64 result than the reference (PyTorch's own rule)."""
    assert h.target is not None and h.test is not None
    fp64 = h.gauge_free(execute_fp64(h.target, case.sample, reseed=h.reseed, mode=h.test))
    if fp64.status != "ok":
        return case.finding(V.SUSPICIOUS, f"beyond tolerance, but no float64 reference ({fp64.error_text})")
    basis = getattr(h.test, "reference_basis", None)
    if basis:
        case.details["fp64_reference"] = dict(basis)  # Note [Gradient fp64 reference]: which side, and why
    path = case.mismatch.path
    case.ref_leaf = dict(output_leaves(case.ref.output)).get(path)
    case.test_leaf = dict(output_leaves(case.test.output)).get(path)
    case.fp64_leaf = dict(output_leaves(fp64.output)).get(path)
    case.fp64_out = fp64.output
    if not all(isinstance(x, torch.Tensor) for x in (case.ref_leaf, case.test_leaf, case.fp64_leaf)):
        return case.finding(V.SUSPICIOUS, "beyond tolerance on a non-tensor output; fp64 rule not applicable")
    judgement = judge_leaf(case.ref_leaf, case.test_leaf, case.fp64_leaf, low_dtype=h.test.compute_dtype,
                           rtol=case.mismatch.rtol, atol=case.mismatch.atol, ref_name=h.reference.name,
                           test_name=h.test.name)
    case.details.update(ref_error_vs_fp64=judgement.ref_error, test_error_vs_fp64=judgement.test_error,
                        fp64_detail=judgement.detail)
    if judgement.test_worse is False:
        h.tally.fp64_accepted += 1
        return "noise"
    if judgement.test_worse is None:
        return case.finding(V.SUSPICIOUS, f"beyond tolerance, fp64 inconclusive: {judgement.detail}")
    return None


def _low_dtype(h: Campaign, case: ValueCase) -> torch.dtype | None:
    return low_dtype_of(h.test.compute_dtype if h.test else None, case.sample.tree())


def check_low_precision_range(h: Campaign, case: ValueCase) -> Outcome:
    """Low precision: where the float64 answer lies outside the low dtype's finite range, inf is right
    (Note [What the low dtype can hold])."""
    low = _low_dtype(h, case)
    ref, test, fp64 = case.ref_leaf, case.test_leaf, case.fp64_leaf
    assert ref is not None and test is not None and fp64 is not None
    if low is None or not test.is_floating_point() or test.shape != fp64.shape:
        return Skipped("not a low-precision comparison of floating outputs")
    r, t = ref.double(), test.double()
    differs = ~((r == t) | (r.isnan() & t.isnan()))
    out_of_range = beyond_range(fp64, low)
    case.details["answer_beyond_low_range"] = int((differs & out_of_range).sum())
    if bool(differs.any()) and bool(out_of_range[differs].all()):
        h.tally.rounding_accepted += 1
        return "noise"
    if ref.is_floating_point() and bool((torch.isfinite(ref) & (ref.abs() > torch.finfo(low).max))[differs].any()):
        return case.finding(V.SUSPICIOUS, f"the float32 result exceeds the range of {low} where they differ; "
                                          "low-precision overflow at the edge of the range is expected here")
    return None


def check_dtype_limits(h: Campaign, case: ValueCase) -> Outcome:
    """Low precision: a parameter the low dtype cannot hold (eps rounding to 0, 1 - eps to 1), or NaN/Inf from an
    intermediate overflow near the range edge, follows from the dtype: at most suspicious (float-accumulating
    reductions excepted)."""
    if _low_dtype(h, case) is None:
        return Skipped("not a low-precision comparison")
    excuse = low_precision_excuse(h, case.sample, case.test.output, case.fp64_out, case.mismatch.path)
    if excuse is None:
        return None
    _, words, figures = excuse
    case.details.update(figures)
    return case.finding(V.SUSPICIOUS, words)


def check_rounding_depth(h: Campaign, case: ValueCase) -> Outcome:
    """Low precision: ordinary rounding of a composite op is not a bug. A finite difference is rounding when it
    is within the op's composite-depth allowance of ulps, or when the test result is no further from float64
    than (twice) the same composite rounded to the low dtype after every step. Non-finite results are never
    excused here (overflow the math does not demand stays a finding)."""
    from fuzz_core.oracles.depth import round_each_step

    assert h.test is not None and h.target is not None
    assert case.ref_leaf is not None and case.test_leaf is not None and case.fp64_leaf is not None
    low = h.test.compute_dtype
    if low is None or low not in (torch.float16, torch.bfloat16):
        return Skipped("not a low-precision comparison")
    if not math.isfinite(case.mismatch.max_abs_diff):
        return Skipped("the difference is not finite: non-finite results are never excused as rounding")
    graph, depth = h.composite(case.sample)
    ulps = rounding_allowance_ulps(depth)
    case.details.update(composite_depth=depth, rounding_allowance_ulps=ulps)
    again = compare_outputs(case.ref.output, case.test.output, low_dtype=low, compares_dtype=h.test.compares_dtype,
                            returns_indices=h.target.returns_indices, inputs=tensor_leaves(case.sample.tree()),
                            ulps=ulps)
    if not any(m.path == case.mismatch.path for m in again.mismatches):
        h.tally.rounding_accepted += 1
        return "noise"
    if depth <= 1:
        return None  # a single kernel: nothing composite to round
    emulated = dict(output_leaves(round_each_step(graph, case.sample.tree(), low))).get(case.mismatch.path)
    test, ref, fp64 = case.test_leaf.double(), case.ref_leaf.to(low).double(), case.fp64_leaf.double()
    if not isinstance(emulated, torch.Tensor) or emulated.shape != test.shape or fp64.shape != test.shape:
        return None
    emulated = emulated.double()
    finite = torch.isfinite(test) & torch.isfinite(ref) & torch.isfinite(fp64)
    # Every position where the outputs disagree must be finite (the mismatch is) and judged below.
    if bool((~finite & ~((test == ref) | (test.isnan() & ref.isnan()))).any()) or not bool(
            torch.isfinite(emulated[finite]).all()):
        return None
    test_error = (test - fp64).abs()[finite]
    step_error = (emulated - fp64).abs()[finite]
    mag = test.abs()[finite].to(low)
    ulp = (torch.nextafter(mag, torch.full_like(mag, math.inf)) - mag).double()
    case.details.update(step_rounding_error=float(step_error.max()) if step_error.numel() else 0.0)
    if bool((test_error <= 2 * step_error + ulps * ulp).all()):
        h.tally.rounding_accepted += 1
        return "noise"
    return None


def check_accumulating_write(h: Campaign, case: ValueCase) -> Outcome:
    """Low precision: an op that accumulates many values into one output element does it in the output's dtype
    (Note [Accumulating writes in a low dtype]): a difference within that many roundings of the magnitudes summed
    is the dtype's, at most suspicious."""
    assert h.test is not None and h.target is not None and h.reference is not None
    low = h.test.compute_dtype
    if low not in (torch.float16, torch.bfloat16) or h.target.short_name.rstrip("_") not in ACCUMULATING_WRITES:
        return Skipped("not an accumulating write in a low dtype")
    if not math.isfinite(case.mismatch.max_abs_diff):
        return Skipped("the difference is not finite")
    assert case.test_leaf is not None and case.fp64_leaf is not None
    depth = accumulation_depth(case.sample.tree())
    bound = partial_results_bound(h, case.sample, case.mismatch.path)
    if bound is None or bound.shape != case.test_leaf.shape or depth < 2:
        return None
    allowance = depth * torch.finfo(low).eps * bound
    test, fp64 = case.test_leaf.double(), case.fp64_leaf.double()
    same = (test == fp64) | (test.isnan() & fp64.isnan())  # an inf input's own inf, where both have it
    case.details.update(accumulation_depth=depth)
    if bool((same | ((test - fp64).abs() <= allowance)).all()):
        return case.finding(V.SUSPICIOUS, f"{h.target.short_name} accumulates up to {depth} values into one element in "
                                          f"{str(low).removeprefix('torch.')}, its output's dtype; the difference is "
                                          f"within that many roundings of the magnitudes summed (Note [Accumulating "
                                          "writes in a low dtype])")
    return None


def check_nonfinite_inputs(h: Campaign, case: ValueCase) -> Outcome:
    """With NaN/Inf inputs the non-finite class depends on operation order; only a dropped NaN/Inf counts."""
    ref_leaf, test_leaf = case.ref_leaf, case.test_leaf
    assert ref_leaf is not None and test_leaf is not None and h.reference is not None and h.test is not None
    if math.isfinite(case.mismatch.max_abs_diff) or inputs_finite(case.sample.tree()):
        return Skipped("finite inputs, or a finite difference")
    if drops_nonfinite(ref_leaf, test_leaf):
        return None
    if drops_nonfinite(test_leaf, ref_leaf):
        # The float64 run uses the same eager kernel, so it cannot arbitrate here.
        return case.finding(V.SUSPICIOUS, f"{h.reference.name} returns finite values where {h.test.name} "
                                          "propagates NaN/Inf from the inputs: possibly a lost NaN propagation "
                                          "in the reference kernel")
    return case.finding(V.SUSPICIOUS, "NaN/Inf mismatch on inputs that contain NaN/Inf (the non-finite class "
                                      "depends on operation order)")


def check_extreme_magnitude(h: Campaign, case: ValueCase) -> Outcome:
    """Beyond sqrt(max), reassociated huge intermediates overflow or round away: inconclusive — unless the
    test mode alone turns a finite, representable true result into an infinity (then only amplification,
    checked next, may rule it out)."""
    if not near_overflow(case.sample):
        return Skipped("no input beyond sqrt of its dtype's max")
    assert case.ref_leaf is not None and case.test_leaf is not None and case.fp64_leaf is not None
    only_test = test_only_infinity(case.ref_leaf, case.test_leaf, case.fp64_leaf)
    if bool(only_test.any()):
        case.details["test_only_infinities"] = int(only_test.sum())
        top = order_dependent_overflow(h, case.sample, case.mismatch.path, only_test, case.test_leaf.dtype)
        if top is not None:
            case.details["intermediate_bound"] = top
            return case.finding(V.SUSPICIOUS, partial_sums_words(top, case.test_leaf.dtype))
        edge = edge_input(case.sample, case.test_leaf.dtype)
        if edge is not None and h.target is not None and (
                h.target.short_name.rstrip("_") not in FLOAT_ACCUMULATING_REDUCTIONS):
            case.details["edge_input"] = edge
            return case.finding(V.SUSPICIOUS, edge_input_words(edge, case.test_leaf.dtype))
        return None
    return case.finding(V.SUSPICIOUS, "mismatch on inputs of extreme magnitude (beyond sqrt of the dtype's max): "
                                      "reassociated huge intermediates overflow or round away")


def partial_results_bound(h: Campaign, sample: Sample, path: str) -> torch.Tensor | None:
    """The magnitudes the computation of output `path` passes through: the op applied to |inputs| in float64
    (intermediate_bound), for a scan its running maximum along the scan (Note [A scan passes through its own
    outputs]); None where the op takes no such inputs."""
    assert h.target is not None
    from fuzz_core.modes.base import bound_callable

    fn = bound_callable(h.target, sample, dtype=torch.float64 if h.target.is_module_class else None)
    bound = intermediate_bound(fn, sample.tree(), lambda out: dict(output_leaves(out)).get(path))
    if h.target.short_name.rstrip("_") in SCAN_OPS:
        bound = scan_prefix_bound(bound, sample.tree())
    return bound


def order_dependent_overflow(h: Campaign, sample: Sample, path: str, where: torch.Tensor, dtype: torch.dtype
                             ) -> float | None:
    """Note [Partial sums at the range edge]

    The float64 answer fits, the reference mode is finite and the test mode overflows: on inputs beyond
    sqrt(max) that is often only the order of summation. The op applied to |inputs| in float64
    (``intermediate_bound``: for a matmul, the sum of |a_ik * b_kj|) bounds the partial results; when that bound
    reaches the edge of the output dtype's range at the positions that overflow, some order of the same terms
    overflows and another does not, and maintainers close such reports as expected. The largest such bound, or
    None. Reductions that must accumulate safely (var, norm, softmax ...: FLOAT_ACCUMULATING_REDUCTIONS) are never
    excused: a stable algorithm for them exists and eager uses it.
    """
    assert h.target is not None
    name = h.target.short_name.rstrip("_")
    if dtype.is_floating_point and name in VARIANCE_REDUCTIONS:
        return _variance_accumulator_overflow(h, sample, path, where)
    if not dtype.is_floating_point or name in FLOAT_ACCUMULATING_REDUCTIONS:
        return None
    bound = partial_results_bound(h, sample, path)
    if not edge_overflow(bound, where, dtype):
        return None
    assert bound is not None
    return float(bound[where][torch.isfinite(bound[where])].max())


def _variance_accumulator_overflow(h: Campaign, sample: Sample, path: str, where: torch.Tensor) -> float | None:
    """Note [A float accumulator's own range] (oracles/low_precision.py): the largest M2 bound at the positions
    that overflow when it lies beyond float32's range, else None (the variance output only, not the mean)."""
    assert h.target is not None
    from fuzz_core.modes.base import bound_callable

    if path not in ("out", "[0]"):
        return None
    inputs = [t for t in tensor_leaves(sample.tree()) if t.is_floating_point()]
    if not inputs:
        return None
    fn = bound_callable(h.target, sample, dtype=torch.float64 if h.target.is_module_class else None)
    args, kwargs = map_tensors(sample.tree(), lambda t: t.double() if t.is_floating_point() else t)
    try:
        with torch.no_grad():
            leaf = dict(output_leaves(fn(*args, **kwargs))).get(path)
    except Exception:  # noqa: BLE001 - no bound, no excuse
        return None
    if not isinstance(leaf, torch.Tensor) or leaf.shape != where.shape or not bool(where.any()):
        return None
    bound = variance_accumulator_bound(leaf, h.target.short_name.startswith("std"), inputs[0].numel())
    at = bound[where]
    at = at[torch.isfinite(at)]
    if not at.numel() or not bool((at > torch.finfo(torch.float32).max).any()):
        return None
    return float(at.max())


def edge_input(sample: Sample, dtype: torch.dtype) -> float | None:
    """Note [Inputs at the range edge]

    An input within EDGE_FACTOR of the output dtype's largest value: the sum or difference of two such inputs
    overflows, so two formulas of the same values (``a + (b - a) * w`` against ``(1 - w) * a + w * b``, a kernel
    against its decomposition) may disagree on whether they overflow, with the true answer in range. Maintainers
    close such reports as expected (research/false_alarms.md: an intermediate overflow at the edge of the range).
    The largest such input magnitude, or None. Reductions that must accumulate safely are excused by neither rule.
    """
    if not dtype.is_floating_point:
        return None
    top = max((m for m in map(largest_finite, tensor_leaves(sample.tree())) if m is not None), default=0.0)
    return top if top > EDGE_FACTOR * torch.finfo(dtype).max else None


def edge_input_words(edge: float, dtype: torch.dtype) -> str:
    name = str(dtype).removeprefix("torch.")
    return (f"the test mode alone overflows where the float64 answer fits, but an input of {edge:.3g} is within a "
            f"factor 2 of {name}'s largest value ({torch.finfo(dtype).max:.4g}): the sum or difference of two such "
            "inputs overflows, so whether a formula overflows depends on how it combines them (Note [Inputs at the "
            "range edge])")


def partial_sums_words(top: float, dtype: torch.dtype) -> str:
    name = str(dtype).removeprefix("torch.")
    return (f"the test mode alone overflows where the float64 answer fits, but the partial results reach {top:.3g}, "
            f"at or beyond the edge of {name}'s range ({torch.finfo(dtype).max:.4g}): whether they overflow depends "
            "on the order of summation or the accumulator's width (Note [Partial sums at the range edge])")


def check_amplification(h: Campaign, case: ValueCase) -> Outcome:
    """Sensitivity: is the input so ill-conditioned that rounding-level changes explain the difference?"""
    assert h.reference is not None and h.target is not None and case.test_leaf is not None
    sample, mismatch = case.sample, case.mismatch

    def run_reference(tree: Any) -> Any:
        return h.reference.run(h.target, sample.with_tree(tree))  # type: ignore[union-attr]

    if math.isfinite(mismatch.max_abs_diff):
        if mismatch.max_abs_diff <= 0:
            return None
        moved = amplification(run_reference, sample.tree(), case.ref.output, mismatch.path, mismatch.max_abs_diff,
                              h.spec.seed)
        case.details["perturbation_shift"] = moved
        if moved is not None and moved >= AMPLIFICATION_FRACTION * mismatch.max_abs_diff:
            return case.finding(V.SUSPICIOUS, f"amplification: a rounding-level input perturbation moves the "
                                              f"reference by {moved:.3g}, the observed difference is "
                                              f"{mismatch.max_abs_diff:.3g}")
        return None
    assert case.ref_leaf is not None and case.fp64_leaf is not None
    only_test = test_only_infinity(case.ref_leaf, case.test_leaf, case.fp64_leaf)
    if bool(only_test.any()):
        overflows = perturbation_overflows(run_reference, sample.tree(), case.ref.output, mismatch.path, only_test,
                                           h.spec.seed)
        case.details["perturbation_overflows"] = overflows
        if overflows:
            return case.finding(V.SUSPICIOUS, "amplification: a rounding-level input perturbation makes the "
                                              "reference overflow where the test mode does")
    return None


VALUE_CHECKS: list[Callable[[Campaign, ValueCase], Outcome]] = [
    check_reference_deterministic, check_reproducible, check_defined_input, check_fp64, check_gradient_leak,
    check_low_precision_range, check_dtype_limits, check_rounding_depth, check_accumulating_write, check_nonfinite_inputs,
    check_extreme_magnitude, check_amplification,
]


def difference_words(case: ValueCase, ref_name: str, test_name: str) -> str:
    """The size of the difference, or, when it is not finite, why not and which values (Note [Truthful reasons])."""
    m = case.mismatch
    if math.isfinite(m.max_abs_diff):
        return f"max abs diff {m.max_abs_diff:.3g}"
    ref, test = case.ref_leaf, case.test_leaf
    if not (isinstance(ref, torch.Tensor) and isinstance(test, torch.Tensor)) or ref.shape != test.shape:
        return "max abs diff not finite"
    where = nonfinite_disagreements(ref, test)
    nan_involved = bool((ref.isnan() ^ test.isnan())[where].any()) if ref.is_floating_point() else False
    head = "max abs diff undefined (a NaN against a non-NaN value)" if nan_involved else "max abs diff inf"
    case.details["max_abs_diff_cause"] = (describe_nonfinite(ref, test, case.fp64_leaf, ref_name=ref_name,
                                                             test_name=test_name) or head)
    if "NaN/Inf mismatch" in str(case.details.get("fp64_detail", "")):
        return head  # the float64 clause names the values
    return f"{head}: {case.details['max_abs_diff_cause']}"


def confirmed_value(h: Campaign, case: ValueCase) -> Finding:
    """The reason quotes the fp64 judgement's own words: RMSEs only where it judged finite values, the values
    themselves where NaN/Inf decided it."""
    assert h.reference is not None and h.test is not None
    m = case.mismatch
    difference = difference_words(case, h.reference.name, h.test.name)
    fp64 = case.details.get("fp64_detail") or "fp64 rule fails"
    return case.finding(V.CONFIRMED, f"{h.test.name} differs from {h.reference.name} beyond tolerance "
                                     f"({m.detail}, {difference}) and is further from float64 ({fp64})")


def confirm_value(h: Campaign, entry: CorpusEntry, ref: Execution, test: Execution, mismatch: Mismatch) -> Finding | str:
    """All value checks on one input whose outputs differ beyond tolerance."""
    case = ValueCase(entry, ref, test, mismatch)
    recorded(case.details).extend([reference_accepts(), beyond_tolerance(mismatch)])
    return run_checks(VALUE_CHECKS, h, case)


def reference_accepts() -> CheckOutcome:
    """The engine's domain check, run before any confirmation: inputs the reference rejects are skipped."""
    return CheckOutcome("reference_accepts_input", "held", "the reference mode ran on this input (inputs it "
                                                           "rejects are outside the API's domain and skipped)")


def beyond_tolerance(mismatch: Mismatch) -> CheckOutcome:
    """The comparison that found the difference, with its figures."""
    return CheckOutcome("beyond_tolerance", "held", mismatch.detail, dict(
        output=mismatch.path, max_abs_diff=mismatch.max_abs_diff, max_rel_diff=mismatch.max_rel_diff,
        mismatch_count=mismatch.mismatch_count, first_index=mismatch.first_index, rtol=mismatch.rtol,
        atol=mismatch.atol))


# -- exception, structure and NaN/Inf outcomes -------------------------------------------------------
def confirm_exception(h: Campaign, entry: CorpusEntry, test: Execution) -> Finding:
    """The test mode raised where the reference returned: confirmed only for the exception oracle."""
    assert h.test is not None
    again = h.run_mode(h.test, entry.sample)
    key = f"exception:{type(test.error).__name__}"
    details: dict[str, Any] = {"test_exception": test.error_text}
    outcomes = recorded(details)
    outcomes.append(reference_accepts())
    rerun = {"rerun_status": again.status}
    if again.status != "exc":
        outcomes.append(CheckOutcome("reproducible", "failed", "the test mode did not raise on a re-run", rerun))
        return Finding(V.FLAKY, key, f"test mode raised once ({test.error_text}) but not on re-run", entry,
                       details=details)
    outcomes.append(CheckOutcome("reproducible", "held", f"the test mode raised again: {again.error_text}", rerun))
    if h.spec.oracle == "exception":
        outcomes.append(CheckOutcome("oracle_is_exception", "held", "the harness's oracle is exception consistency"))
        return Finding(V.CONFIRMED, key, f"{h.test.name} raises where {h.spec.reference_mode} returns: "
                                         f"{test.error_text}", entry, details=details)
    outcomes.append(CheckOutcome("oracle_is_exception", "failed", f"the harness's oracle is {h.spec.oracle}: an "
                                                                  "exception alone is not its failure"))
    return Finding(V.SUSPICIOUS, key, f"{h.test.name} raises where the reference returns: {test.error_text}",
                   entry, details=details)


def confirm_structural(h: Campaign, entry: CorpusEntry, mismatch: Mismatch) -> Finding:
    """A shape/dtype/structure difference is confirmed when it reproduces on a re-run of both modes."""
    assert h.test is not None and h.reference is not None
    again = h.run_mode(h.test, entry.sample)
    ref = h.run_mode(h.reference, entry.sample)
    key = f"{mismatch.kind}:{mismatch.path}"
    details: dict[str, Any] = {}
    outcomes = recorded(details)
    outcomes += [reference_accepts(), CheckOutcome(f"{mismatch.kind}_differs", "held", mismatch.detail,
                                                   {"output": mismatch.path})]
    rerun = {"reference_rerun": ref.status, "test_rerun": again.status}
    if again.status == "ok" and ref.status == "ok":
        repeat = h.compare(ref.output, again.output, entry.sample)
        if any(m.kind == mismatch.kind and m.path == mismatch.path for m in repeat.mismatches):
            outcomes.append(CheckOutcome("reproducible", "held", "the same mismatch on a re-run of both modes", rerun))
            return Finding(V.CONFIRMED, key, f"{mismatch.kind} mismatch at {mismatch.path}: {mismatch.detail}",
                           entry, mismatch, details)
    outcomes.append(CheckOutcome("reproducible", "failed", "a re-run of both modes did not give the same mismatch",
                                 rerun))
    return Finding(V.FLAKY, key, f"{mismatch.kind} mismatch did not reproduce on re-run", entry, mismatch, details)


def low_precision_excuse(h: Campaign, sample: Sample, test_out: Any, fp64_out: Any, path: str
                         ) -> tuple[str, str, dict[str, Any]] | None:
    """(check, reason, figures) when a NaN/Inf in a low dtype follows from what the dtype can hold (an
    unrepresentable parameter, an intermediate overflow near the range edge), else None
    (Note [What the low dtype can hold])."""
    assert h.target is not None
    low = low_dtype_of(h.test.compute_dtype if h.test else None, sample.tree())
    if low is None:
        return None
    name = str(low).removeprefix("torch.")
    words = unrepresentable_parameters(sample.tree(), low)
    if words:
        return ("check_unrepresentable_parameter", f"a parameter {name} cannot represent ({'; '.join(words)}): "
                "the difference follows from the dtype, not the kernel", {"unrepresentable_parameters": words})
    test_leaf, fp64_leaf = dict(output_leaves(test_out)).get(path), dict(output_leaves(fp64_out)).get(path)
    if h.target.short_name.rstrip("_") in FLOAT_ACCUMULATING_REDUCTIONS or not (
            isinstance(test_leaf, torch.Tensor) and isinstance(fp64_leaf, torch.Tensor)):
        return None
    where = nonfinite_where_answer_fits(test_leaf, fp64_leaf, low)
    bound = partial_results_bound(h, sample, path)
    if not edge_overflow(bound, where, low):
        return None
    assert bound is not None
    top = float(bound[where][torch.isfinite(bound[where])].max())
    return ("check_intermediate_overflow", f"NaN/Inf in {name} where the float64 answer fits, but partial results "
            f"reach {top:.3g}, at the edge of the range ({torch.finfo(low).max:.4g}): an intermediate overflow near "
            "the range edge is expected", {"intermediate_bound": top})


def check_nan_inf(h: Campaign, entry: CorpusEntry, test: Execution) -> Finding | str:
    """The NaN/Inf oracle: non-finite output from finite inputs where float64 is finite and in range."""
    assert h.target is not None and h.test is not None and h.reference is not None
    if not inputs_finite(entry.sample.tree()):
        return "pass"
    fp64 = execute_fp64(h.target, entry.sample, reseed=h.reseed, mode=h.test)
    hit = unexpected_nonfinite(test.output, fp64.output if fp64.status == "ok" else None)
    if hit is None:
        return "pass"
    path, count, first = hit
    key = f"nan_inf:{path}"
    leaf = dict(output_leaves(test.output)).get(path)
    shape = list(leaf.shape) if isinstance(leaf, torch.Tensor) else None
    mismatch = Mismatch("nan_inf", path, f"{count} NaN/Inf where float64 is finite", math.inf, math.inf, count, first,
                        shape=shape)
    details: dict[str, Any] = {}
    outcomes = recorded(details)
    outcomes += [reference_accepts(),
                 CheckOutcome("inputs_finite", "held", "every floating input is finite"),
                 CheckOutcome("float64_finite", "held", mismatch.detail,
                              {"output": path, "nonfinite_count": count, "first_index": first})]
    differential = h.reference.name != h.test.name
    ref = None
    if differential:
        # A differential pattern asks whether the modes disagree: when the reference mode produces
        # the same non-finite values, the overflow is the kernel's in every mode, not this pair's.
        ref = h.run_mode(h.reference, entry.sample)
        ref_hit = unexpected_nonfinite(ref.output, fp64.output) if ref.status == "ok" else None
        if ref_hit is not None and ref_hit[0] == path:
            return "pass"
        outcomes.append(CheckOutcome("reference_mode_finite", "held", f"{h.reference.name} gives no unexpected "
                                     f"NaN/Inf in {path}", {"reference_run": ref.status}))
    else:
        outcomes.append(CheckOutcome("reference_mode_finite", "skipped", "not a differential pattern (one mode)"))
    tiny = near_underflow(entry.sample) if h.test.name.startswith(GRADIENT_TEST_MODES) else None
    if tiny is not None and not nonfinite_without_tiny(h, entry.sample, fp64.output):
        words = (f"NaN/Inf in a gradient at an input of magnitude {tiny:.3g}, below sqrt of the dtype's smallest "
                 "normal: the gradient's negative powers leave the dtype's range where float64 holds them")
        details["tiny_input"] = tiny
        outcomes.append(CheckOutcome("tiny_magnitude", "decided", words, {"tiny_input": tiny,
                                                                          "verdict": V.SUSPICIOUS}))
        return Finding(V.SUSPICIOUS, key, words, entry, mismatch, details)
    if near_overflow(entry.sample):
        # Huge inputs: only an infinity the test mode alone produces (the reference mode is finite there)
        # is a bug, and only when a rounding-level perturbation does not make the reference overflow too.
        if ref is None or ref.status != "ok":
            outcomes.append(CheckOutcome("extreme_magnitude", "decided", "inputs beyond sqrt of the dtype's max and "
                                         "no reference run to compare with", {"verdict": V.SUSPICIOUS}))
            return Finding(V.SUSPICIOUS, key, "NaN/Inf on inputs of extreme magnitude (beyond sqrt of the dtype's "
                                              "max): float32 overflow of intermediates", entry, mismatch, details)
        try:
            leaf = dict(output_leaves(test.output))[path]
            ref_leaf = dict(output_leaves(ref.output))[path]
            fp64_leaf = dict(output_leaves(fp64.output))[path]
            only_test = test_only_infinity(ref_leaf, leaf, fp64_leaf)
            overflows = bool(only_test.any()) and perturbation_overflows(
                lambda tree: h.reference.run(h.target, entry.sample.with_tree(tree)),  # type: ignore[union-attr]
                entry.sample.tree(), ref.output, path, only_test, h.spec.seed)
        except Exception as exc:  # noqa: BLE001 - a failed check never confirms
            error = f"{type(exc).__name__}: {str(exc)[:200]}"
            details["failed_check"] = "perturbation_overflows"
            outcomes.append(CheckOutcome("perturbation_overflows", "error", f"could not run ({error})"))
            return Finding(V.SUSPICIOUS, key, f"confirmation check perturbation_overflows could not run "
                                              f"({error}); not confirmed", entry, mismatch, details)
        details.update(test_only_infinities=int(only_test.sum()), perturbation_overflows=overflows)
        figures = {"test_only_infinities": int(only_test.sum()), "perturbation_overflows": overflows}
        top = None if overflows or not bool(only_test.any()) else order_dependent_overflow(
            h, entry.sample, path, only_test, leaf.dtype)
        if top is not None:
            details["intermediate_bound"] = top
            outcomes.append(CheckOutcome("intermediate_overflow", "decided", partial_sums_words(top, leaf.dtype),
                                         {**figures, "intermediate_bound": top, "verdict": V.SUSPICIOUS}))
            return Finding(V.SUSPICIOUS, key, partial_sums_words(top, leaf.dtype), entry, mismatch, details)
        if not bool(only_test.any()) or overflows:
            outcomes.append(CheckOutcome("perturbation_overflows", "decided", "inputs beyond sqrt of the dtype's max: "
                                         "the reference overflows there too, or does under a rounding-level "
                                         "perturbation", {**figures, "verdict": V.SUSPICIOUS}))
            return Finding(V.SUSPICIOUS, key, "NaN/Inf on inputs of extreme magnitude (beyond sqrt of the dtype's "
                                              "max) that a rounding-level perturbation also gives the reference",
                           entry, mismatch, details)
        outcomes.append(CheckOutcome("perturbation_overflows", "held", "inputs beyond sqrt of the dtype's max, but "
                                     "only the test mode overflows, also under a rounding-level perturbation",
                                     figures))
    excuse = low_precision_excuse(h, entry.sample, test.output, fp64.output, path)
    if excuse is not None:
        check, words, figures = excuse
        details.update(figures)
        outcomes.append(CheckOutcome(check, "decided", words, {**figures, "verdict": V.SUSPICIOUS}))
        return Finding(V.SUSPICIOUS, key, words, entry, mismatch, details)
    again = h.run_mode(h.test, entry.sample)
    if again.status != "ok" or unexpected_nonfinite(again.output, fp64.output) is None:
        outcomes.append(CheckOutcome("reproducible", "failed", "no unexpected NaN/Inf on a re-run of the test mode",
                                     {"rerun_status": again.status}))
        return Finding(V.FLAKY, key, "NaN/Inf did not reproduce on re-run", entry, mismatch, details)
    outcomes.append(CheckOutcome("reproducible", "held", "the same unexpected NaN/Inf on a re-run of the test mode"))
    return Finding(V.CONFIRMED, key, f"{count} NaN/Inf in {path} from finite inputs where the float64 result is "
                                     "finite and in range", entry, mismatch, details)
