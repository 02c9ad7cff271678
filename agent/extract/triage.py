"""Offline triage: silent-bug report or not, usable repro, and the false-alarm classes we can see.

Note [False-alarm rules]
Each rule encodes one class of research/false_alarms.md from evidence in the code and the
printed output, never from an issue's number or wording alone:
- train_mode_tracing: traced/scripted/compiled code holds Dropout/BatchNorm-like modules and
  the snippet never calls ``.eval()``.
- random_ops: a random op runs inside the compiled/traced user code.
- bitwise_comparison: a mode pair compared with ``torch.equal`` or a tolerance ≤ 1e-6 while
  every printed difference is at float32 rounding level (≤ 1e-5).
- low_precision: float16/bfloat16 vs float32 (or a low-precision mode pair without a
  higher-precision reference) with every printed difference within two ulps at unit scale; and
  gradcheck/gradgradcheck on inputs that are not float64 (finite differences need double precision); and a
  float32 matmul or convolution on CUDA that ran in TF32 (Note [TF32 on Ampere] in text.py).
- ieee_nan: a domain-restricted op (log, sqrt, acos, ...) fed literal inputs outside its domain.
- ties: a tie-sensitive op (topk, sort, argmax, ...) on inputs with repeated values, when the repro reads
  the indices (argmax-like ops always do; ``x.max(1)[0]``, ``.values`` and full reductions read values only).
- duplicate_indices: an overwriting scatter/index_put with repeated literal indices.
- out_of_domain: a negative size-like parameter (kernel_size, stride, output_size, dilation).
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.extract.modes import ModePair
from agent.extract.scan import SEEDING_CALLS, CallSite, CodeFacts
from agent.extract.text import TextSignals
from agent.extract.verdicts import FLOAT_NOISE, CommentVerdict, TrackerVerdict
from agent.extract.vocab import (
    DOMAIN_RESTRICTED,
    LOW_PRECISION,
    RANDOM_OPS,
    SCATTER_OVERWRITE,
    TIE_SENSITIVE,
    TRAIN_MODE_MODULES,
)
from agent.llm.schemas import TriageResult
from agent.patterns import PatternKind

# two units in the last place at magnitude 1
TWO_ULPS = {"float16": 2 * 2.0**-10, "bfloat16": 2 * 2.0**-7}
FLOAT32_NOISE = 1e-5
_SIZE_PARAMS = ("kernel_size", "stride", "output_size", "dilation", "size")


@dataclass(frozen=True)
class TriageInput:
    facts: CodeFacts
    signals: TextSignals
    modes: ModePair | None
    api: str | None
    has_repro: bool
    verdict: CommentVerdict = CommentVerdict()  # Note [Verdicts in comments]
    tracker: TrackerVerdict = TrackerVerdict()  # Note [The tracker's own verdict]
    nonfinite: bool = False  # the report shows or names a NaN/Inf result (the analyzer's nan_evidence)


def _short(api: str | None) -> str:
    return (api or "").rsplit(".", 1)[-1]


def _calls_of(facts: CodeFacts, api: str | None) -> list[CallSite]:
    return [c for c in facts.calls if c.api == api]


def _flat_numbers(value: object) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, list | tuple):
        return [n for item in value for n in _flat_numbers(item)]
    return []


# typed constructors of old reports take a list of values too: torch.LongTensor([0, 0, 1])
_LITERAL_CONSTRUCTORS = frozenset({"torch.tensor", "torch.as_tensor"}) | {
    f"torch.{kind}Tensor" for kind in ("", "Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Byte", "Char",
                                       "Bool")}


def tensor_literals(facts: CodeFacts) -> list[list[float]]:
    """Values of ``torch.tensor([...])`` (and ``torch.LongTensor([...])``) literals, one list per call."""
    out = []
    for call in facts.calls:
        if call.api in _LITERAL_CONSTRUCTORS and call.args and isinstance(call.args[0], list | tuple):
            numbers = _flat_numbers(call.args[0])
            if numbers:
                out.append(numbers)
    return out


def _train_mode_tracing(t: TriageInput) -> str | None:
    if t.modes is None or t.modes.kind not in (PatternKind.JIT_Eager_Mismatch, PatternKind.Compile_Eager_Mismatch):
        return None
    culprits = [c.api for c in t.facts.calls if c.kind == "module" and _short(c.api).startswith(TRAIN_MODE_MODULES)]
    if culprits and not t.facts.eval_called:
        return f"{culprits[0]} is traced while the model is in train mode (no .eval() call)"
    return None


def _draws_nothing(site: CallSite, t: TriageInput) -> bool:
    """Dropout that is the identity: ``training=False``, ``p=0``, or a Dropout module after ``.eval()``.

    Note [Random ops that draw nothing]: the RNG-stream false alarm needs numbers drawn inside the compared code.
    Dropout off draws none, and what a class's ``__init__`` draws (weights, a constant buffer) is drawn once,
    when the model is built, and both modes read the same tensor.
    """
    if not _short(site.api).lower().startswith("dropout"):
        return False
    if site.kind == "module":
        return t.facts.eval_called or site.kwargs.get("p", site.args[0] if site.args else None) == 0
    p = site.kwargs.get("p", site.args[1] if len(site.args) > 1 else None)
    training = site.kwargs.get("training", site.args[2] if len(site.args) > 2 else True)
    return training is False or p == 0


def _random_ops(t: TriageInput) -> str | None:
    if t.modes is None or t.modes.kind not in (PatternKind.JIT_Eager_Mismatch, PatternKind.Compile_Eager_Mismatch):
        return None
    if t.modes.kind == PatternKind.Compile_Eager_Mismatch and t.facts.fallback_random and any(
            c.api in SEEDING_CALLS for c in t.facts.calls):
        return None  # Note [Inductor drawing eager's numbers] (scan.py)
    random_inside = [c.api for c in t.facts.calls if c.in_user_code and c.api in RANDOM_OPS and not c.in_constructor
                     and not c.shared_draw and not _draws_nothing(c, t)]  # Note [Draws outside the compiled code]
    if random_inside:
        return f"{random_inside[0]} runs inside the compared code; RNG streams differ between modes"
    return None


def _bitwise(t: TriageInput) -> str | None:
    if t.modes is None or t.modes.kind not in (
        PatternKind.JIT_Eager_Mismatch, PatternKind.Compile_Eager_Mismatch, PatternKind.Device_Mismatch,
        PatternKind.Layout_Mismatch,
    ):
        return None
    tight = False
    for call in t.facts.calls:
        short = _short(call.api)
        if short in ("equal", "array_equal"):
            tight = True
        elif short in ("allclose", "assert_close", "isclose", "assert_allclose"):
            atol, rtol = call.kwargs.get("atol"), call.kwargs.get("rtol")
            if isinstance(atol, int | float) and atol <= 1e-6 and rtol in (0, 0.0):
                tight = True
    diffs = t.signals.reported_diffs
    if tight and diffs and max(diffs) <= FLOAT32_NOISE:
        return f"bitwise/tight comparison across modes; the printed difference {max(diffs):.3g} is float32 rounding"
    return None


def _single_precision_gradcheck(t: TriageInput) -> str | None:
    """gradcheck's finite differences need float64: in float32 the step is lost in rounding and the check fails."""
    checks = [c for c in t.facts.calls if _short(c.api) in ("gradcheck", "gradgradcheck")]
    double = ("float64", "complex128")
    if checks and not any(d in t.facts.dtypes for d in double) and not any(
            any(name in str(v) for name in (*double, "double")) for c in t.facts.calls for v in c.kwargs.values()):
        return f"{_short(checks[0].api)} runs in single precision; finite differences need float64 inputs"
    return None


def _low_precision(t: TriageInput) -> str | None:
    low = [d for d in t.facts.dtypes if d in LOW_PRECISION]
    if not low or not t.signals.reported_diffs:
        return None
    if t.modes is not None and t.modes.kind != PatternKind.Precision_Mismatch and t.signals.mentions_reference:
        return None
    bound = max(TWO_ULPS[d] for d in low)
    worst = max(t.signals.reported_diffs)
    if worst <= bound:
        return f"{'/'.join(low)} differs by {worst:.3g}, within two ulps ({bound:.3g}) of the low-precision dtype"
    return None


# Ops whose float32 CUDA kernels may run in TF32 (Note [TF32 on Ampere] in text.py): cuBLAS matmuls, cuDNN convs.
_TF32_MATMULS = frozenset({"matmul", "mm", "bmm", "addmm", "addbmm", "baddbmm", "addmv", "mv", "linear", "Linear",
                           "einsum", "tensordot", "chain_matmul", "Bilinear", "bilinear"})
_TF32_CONVS = frozenset({"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                         "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"})


def _tf32_rounding(t: TriageInput) -> str | None:
    """float32 matmul/conv on an Ampere-or-later GPU that ran in TF32 (Note [TF32 on Ampere] in text.py)."""
    why, op = t.signals.tf32, _short(t.api)
    if why is None or not t.facts.cuda or any(d in LOW_PRECISION for d in t.facts.dtypes):
        return None
    # TF32 rounds, it does not make NaN/Inf or large gaps: a report showing either is about something else
    if t.facts.special_values or t.facts.nan_checks or max(t.signals.reported_diffs, default=0.0) > 0.1:
        return None
    if op in _TF32_CONVS or op in _TF32_MATMULS and t.signals.tf32_matmuls:
        return (f"float32 {op} on CUDA runs in TF32 there ({why}): inputs rounded to 10 mantissa bits, about 1e-3 "
                "relative, as documented")
    return None


def _ieee_nan(t: TriageInput) -> str | None:
    condition = DOMAIN_RESTRICTED.get(_short(t.api))
    if condition is None:
        return None
    values = [v for row in tensor_literals(t.facts) for v in row]
    violating = {
        "negative": any(v < 0 for v in values),
        "below_minus_one": any(v < -1 for v in values),
        "abs_above_one": any(abs(v) > 1 for v in values),
        "below_one": any(v < 1 for v in values),
        "negative_base": any(v < 0 for v in values),
    }.get(condition, False)
    if violating and ("nan" in " ".join(t.signals.labels) or t.facts.nan_checks or t.facts.special_values):
        return f"{_short(t.api)} is given inputs outside its real domain; IEEE arithmetic demands NaN there"
    return None


def _where_gradient(t: TriageInput) -> str | None:
    """A NaN/Inf gradient through torch.where: the branch it does not select still gets a zero gradient, and
    zero times that branch's own NaN/Inf derivative (log, sqrt or a division at the masked-out points) is NaN.
    PyTorch documents it as a known limitation (false_alarms.md); the IEEE arithmetic of the unselected branch,
    not a wrong formula, puts the NaN there."""
    if not t.nonfinite or "grad" not in t.facts.modes:
        return None
    if any(call.api == "torch.where" or call.api == "torch.Tensor.where" for call in t.facts.calls):
        return "torch.where's gradient takes NaN/Inf from the branch it does not select (0 times NaN is NaN)"
    return None


def _ties(t: TriageInput) -> str | None:
    if _short(t.api) not in TIE_SENSITIVE:
        return None
    # ties change which index is returned, never the value: a repro that reads only values has no tie to blame
    calls = _calls_of(t.facts, t.api)
    if not _short(t.api).startswith("arg") and calls and all(c.values_only for c in calls):
        return None
    for row in tensor_literals(t.facts):
        if len(set(row)) < len(row):
            return f"{_short(t.api)} on repeated values: any of the tied indices is a valid answer"
    if any(c.api in ("torch.ones", "torch.zeros", "torch.full") for c in t.facts.calls):
        return f"{_short(t.api)} on a constant tensor: every index is tied"
    return None


def _duplicate_indices(t: TriageInput) -> str | None:
    if _short(t.api) not in SCATTER_OVERWRITE:
        return None
    for call in _calls_of(t.facts, t.api):
        if call.kwargs.get("accumulate") is True:
            return None
    for row in tensor_literals(t.facts):
        if all(float(v).is_integer() for v in row) and len(set(row)) < len(row):
            return "overwriting scatter with repeated indices: which write wins is undefined"
    return None


def _out_of_domain(t: TriageInput) -> str | None:
    for call in _calls_of(t.facts, t.api):
        for name in _SIZE_PARAMS:
            value = call.kwargs.get(name)
            if any(v < 0 for v in _flat_numbers(value)):
                return f"negative {name} is outside the documented domain"
    return None


FALSE_ALARM_RULES = (
    ("train_mode_tracing", _train_mode_tracing),
    ("random_ops", _random_ops),
    ("bitwise_comparison", _bitwise),
    ("low_precision", _low_precision),
    ("low_precision", _single_precision_gradcheck),
    ("low_precision", _tf32_rounding),
    ("ieee_nan", _ieee_nan),
    ("ieee_nan", _where_gradient),
    ("ties", _ties),
    ("duplicate_indices", _duplicate_indices),
    ("out_of_domain", _out_of_domain),
)


# calls that compare two results (gradcheck compares autograd's Jacobian with finite differences)
_COMPARING_CALLS = frozenset({"allclose", "assert_close", "equal", "isclose", "assert_allclose", "gradcheck",
                              "gradgradcheck"})


def _evidence(t: TriageInput) -> int:
    """Points for "this reports a wrong result without an error"; 4 or more with a repro is a silent bug."""
    s = t.signals
    compares = any(_short(c.api) in _COMPARING_CALLS for c in t.facts.calls)
    # Note [What a repro prints] (scan.py), Note [Printed values that differ] (text.py): a printed difference,
    # pasted output whose values disagree, or both sides of a mode pair printed is the comparison shown
    printed = t.facts.prints_difference or s.printed_values_differ or (
        t.modes is not None and t.facts.printed_values >= 2) or (
        s.states_expected_value and t.facts.printed_values >= 1)  # Note [An expected value stated] (text.py)
    shown = compares or t.facts.nan_checks > 0 or bool(s.reported_diffs) or printed
    # "gradcheck fails for X" / "assert_close fails": what fails is the repro's own comparison, not a run that raised
    check_fails = s.title_only_fails and compares and not s.raised_error
    return (
        3 * s.silent_label + s.numeric_label + min(s.mismatch_words, 3)
        + 2 * shown + 2 * (t.modes is not None)
        + 2 * s.title_symptom + (s.shows_output and t.modes is not None)
        - 3 * (s.title_not_silent and not s.title_symptom and not check_fails) - 2 * s.raised_error
        # a confirmation says the report is a bug; where the only output shown is an exception the repro raised,
        # the bug confirmed is that error, not a wrong result
        + 4 * bool((t.tracker.confirmed or t.verdict.confirmed) and not (s.raised_error and not shown))
    )


def _named_class(t: TriageInput) -> str | None:
    """The false-alarm class a dismissal names; float noise is low precision in a low dtype, else tight comparison."""
    named = t.verdict.false_alarm_class
    if named == FLOAT_NOISE:
        return "low_precision" if any(d in LOW_PRECISION for d in t.facts.dtypes) else "bitwise_comparison"
    return named


def triage(t: TriageInput) -> TriageResult:
    s = t.signals
    confirmed = t.tracker.confirmed or ("a comment confirms it" if t.verdict.confirmed else None)
    if s.fix_pr:
        return TriageResult(is_silent_bug=False, has_repro=t.has_repro, confidence=0.8,
                            reason="a pull request fixing a bug reported elsewhere, not a report")
    if s.feature_or_docs and not s.silent_label and not confirmed:
        return TriageResult(is_silent_bug=False, has_repro=t.has_repro, confidence=0.85,
                            reason="a feature request, RFC or documentation issue")
    if s.crash and not s.silent_label:  # a confirmed crash is a real bug, and still not a silent one
        return TriageResult(is_silent_bug=False, has_repro=t.has_repro, confidence=0.8,
                            reason="a crash, not a silent wrong result")
    for name, rule in FALSE_ALARM_RULES if not confirmed else ():
        why = rule(t)
        if why:
            confidence = 0.6 + 0.15 * s.closed_as_not_a_bug + 0.1 * s.question + 0.1 * (not s.silent_label)
            return TriageResult(is_silent_bug=False, has_repro=t.has_repro, false_alarm_class=name,  # type: ignore[arg-type]
                                confidence=min(confidence, 0.95), reason=why)
    named = None if confirmed else _named_class(t)
    if named:
        return TriageResult(is_silent_bug=False, has_repro=t.has_repro, false_alarm_class=named,  # type: ignore[arg-type]
                            confidence=0.75, reason="a maintainer's comment explains it as a known false alarm")
    evidence = _evidence(t)
    dismissed = t.tracker.dismissed or ("closed or labelled as not a bug" if s.closed_as_not_a_bug or (
        s.not_bug_label and not s.silent_label) else None)
    if not confirmed and dismissed:
        return TriageResult(is_silent_bug=False, has_repro=t.has_repro, confidence=0.6,
                            reason=f"not a bug: {dismissed}")
    if evidence >= 4 and (t.has_repro or s.silent_label):
        confidence = min(0.4 + 0.06 * evidence, 0.95)
        what = f"{t.modes.kind.value} on {t.api}" if t.modes and t.api else (t.api or "an unnamed API")
        because = f"; confirmed: {confirmed}" if confirmed else ""
        return TriageResult(is_silent_bug=True, has_repro=t.has_repro, confidence=confidence,
                            reason=f"reports wrong results without an error: {what}{because}")
    return TriageResult(is_silent_bug=False, has_repro=t.has_repro, confidence=0.5,
                        reason="no evidence of a silent wrong result")
