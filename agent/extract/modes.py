"""From code facts and prose to the differential mode pair and the pattern kind."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agent.extract.scan import CodeFacts
from agent.extract.text import TextSignals
from agent.extract.vocab import LOW_PRECISION
from agent.patterns import PatternKind

_STRIDING = frozenset({"t", "transpose", "permute", "mT", "T", "slice_step", "as_strided"})
_LAYOUT_WORDS = re.compile(r"contiguous|channels?[_ -]last|stride|memory[_ ]format|expand|transpos|layout")
# in-place writes through expanded (stride-0) or overlapping views are aliasing reports of the variant pair
_VARIANT_WORDS = re.compile(
    r"\bout=|in-place|inplace|\bout\b (?:argument|parameter|kwarg|tensor)|(?:argument|parameter|kwarg) `?out\b|`out`|"
    r"[a-z0-9]_out\b|\balias|\boverlap|\bexpand(?:ed)?\b|stride.0")


class _AllWords:
    """A ``search`` that finds text containing every one of its patterns, in any order."""

    def __init__(self, *patterns: re.Pattern[str]) -> None:
        self.patterns = patterns

    def search(self, text: str) -> bool:
        return all(pattern.search(text) for pattern in self.patterns)


_HALF_AS_ENGLISH_BEFORE = ("upper", "lower", "first", "second", "other", "top", "bottom", "left", "right", "one",
                           "and", "by")
# (regex over title + prose, mode) in priority order: the fallback when the code says nothing
_TEXT_MODES: tuple[tuple[re.Pattern[str] | _AllWords, str], ...] = (
    (re.compile(r"jit\.script|\bscripted\b|torchscript.*script"), "jit.script"),
    # `trace` in backticks or torch.trace is the op that sums a diagonal, not tracing
    (re.compile(r"jit\.trace|(?<![`.])\btraced?\b(?!`)"), "jit.trace"),
    # "compiled from source", "compiled against CUDA 11", "compiled with gcc": how torch itself was built
    (re.compile(r"torch\.compile|inductor|dynamo|\bcompiled\b(?! (?:from|against)\b)"
                r"(?! with (?:cuda|gcc|clang|msvc|cudnn|mkl|openmp|rocm)\b)"), "compile:inductor"),
    (re.compile(r"\bvmap\b"), "vmap"),
    (re.compile(r"gradient|backward|autograd|backprop|\bderivatives?\b"), "grad"),
    (re.compile(r"channels?[_ -]last"), "layout:channels_last"),
    (re.compile(r"(?:non|dis)-?contiguous|\bnot contiguous\b|\btransposed\b|\bpermuted\b|\bstrided\b|\bstrides\b"),
     "layout:noncontiguous"),
    (re.compile(r"\bbfloat16\b|\bbf16\b"), "dtype:bfloat16"),
    # "half" is also English ("the upper half", "half of the rows", "half the time"): those uses name no dtype
    (re.compile(r"\bfloat16\b|\bfp16\b|" + "".join(f"(?<!{w} )" for w in _HALF_AS_ENGLISH_BEFORE)
                + r"\bhalf\b(?![ -](?:of|the|as|an?|way|hour|hours|second|seconds|size|life|it|them)\b)"),
     "dtype:float16"),
    # "cuda ... cpu" in either order is both words present; one ``.*`` regex re-scanned the
    # rest of the text from every "cuda" (quadratic). See Note [Linear-time patterns on issue text].
    (_AllWords(re.compile(r"\bcuda\b"), re.compile(r"\bcpu\b")), "device:cuda"),
    (_AllWords(re.compile(r"\bgpu\b"), re.compile(r"\bcpu\b")), "device:cuda"),
    (re.compile(r"\bmps\b|\bxpu\b"), "device:cuda"),
)
_OTHER_ACCELERATORS = (("mps", re.compile(r"\bmps\b")), ("xpu", re.compile(r"\bxpu\b")))
# Labels maintainers put on a report name its area: the mode when neither the code nor the title does.
_LABEL_MODES: tuple[tuple[str, str], ...] = (
    ("oncall: pt2", "compile:inductor"),
    ("module: inductor", "compile:inductor"),
    ("module: dynamo", "compile:inductor"),
    ("oncall: jit", "jit.trace"),
    ("module: half", "dtype:float16"),
    ("module: bfloat16", "dtype:bfloat16"),
    ("module: amp (automated mixed precision)", "autocast:float16"),
    ("module: memory format", "layout:channels_last"),
    ("module: partial aliasing", "variant:inplace"),
    ("module: vmap", "vmap"),
    ("module: autograd", "grad"),
    ("module: mps", "device:cuda"),
    ("module: xpu", "device:cuda"),
    ("module: cuda", "device:cuda"),
)
# A title that says where the result is wrong ("wrong output on CUDA", "differs on the GPU") names the device
# pair even without the word "cpu": the CPU is the reference a CUDA-only bug is measured against. Read in the
# title only: prose names CUDA in every environment dump.
_TITLE_DEVICE = re.compile(r"\bcuda\b|\bgpus?\b")

KIND_OF_MODE: tuple[tuple[str, PatternKind], ...] = (
    ("grad:compile:", PatternKind.Gradient_Mismatch),
    ("jit.", PatternKind.JIT_Eager_Mismatch),
    ("compile:", PatternKind.Compile_Eager_Mismatch),
    ("dtype:", PatternKind.Precision_Mismatch),
    ("autocast:", PatternKind.Precision_Mismatch),
    ("layout:", PatternKind.Layout_Mismatch),
    ("variant:", PatternKind.Variant_Mismatch),
    ("device:", PatternKind.Device_Mismatch),
    ("vmap", PatternKind.Batch_Mismatch),
    ("grad", PatternKind.Gradient_Mismatch),
    ("quant:", PatternKind.Quantization_Mismatch),
)


@dataclass(frozen=True)
class ModePair:
    kind: PatternKind
    reference: str
    test: str
    test_options: dict[str, Any]
    evidence: str  # "code", "text" (the title, a label) or "prose" (only the body's words)


def kind_of(test_mode: str) -> PatternKind | None:
    for prefix, kind in KIND_OF_MODE:
        if test_mode.startswith(prefix):
            return kind
    return None


_GRADIENT_WORDS = re.compile(r"\bgrad(?:ient)?s?\b|\bbackward\b|\bderivative|\bautograd\b")


_HIGHER_FLOATS = frozenset({"float32", "float64", "complex64", "complex128"})


def _one_low_dtype_on_two_devices(facts: CodeFacts) -> bool:
    """Note [One low dtype on two devices]: the code runs on an accelerator and on the CPU by name, and its only
    floating dtypes are low ones (integer dtypes, for indices or bit patterns, do not count)."""
    return facts.cuda and facts.on_cpu and any(d in LOW_PRECISION for d in facts.dtypes) and not (
        _HIGHER_FLOATS & set(facts.dtypes))


# Note [The backend under test]: code that compiles with backend="eager" (or aot_eager) and with inductor uses the
# lighter backend as its reference (the minifier's way of splitting dynamo from inductor); inductor is under test.
_BACKEND_ORDER = ("compile:inductor", "compile:aot_eager", "compile:eager")


def _compiled_mode(facts: CodeFacts) -> str | None:
    compiled = [name for name in facts.modes if name.startswith("compile:")]
    return min(compiled, key=lambda n: _BACKEND_ORDER.index(n) if n in _BACKEND_ORDER else -1, default=None)


def _from_code(facts: CodeFacts, prose: str) -> tuple[str, dict[str, Any]] | None:
    compiled = _compiled_mode(facts)
    if compiled and "grad" in facts.modes and (facts.backward_kernel or _GRADIENT_WORDS.search(prose)):
        # Note [Compiled gradients]: a backward through compiled code is checked on its gradients
        return f"grad:{compiled}", facts.modes[compiled]
    if compiled and not any(name.startswith("jit.") for name in facts.modes):
        return compiled, facts.modes[compiled]
    for prefix in ("jit.script", "jit.trace", "compile:", "vmap", "quant:"):
        for name, options in facts.modes.items():
            if name.startswith(prefix):
                return name, options
    layout_words = bool(_LAYOUT_WORDS.search(prose))
    if facts.memory_format_channels_last and layout_words:
        return "layout:channels_last", {}
    if (facts.layout_calls or facts.contiguous_calls) and layout_words and facts.contiguous_calls:
        return "layout:noncontiguous", {}
    if facts.inplace_on_expanded or facts.inplace_overlaps:
        # a write into a stride-0 view, or one that reads a view of itself: Note [Writes into repeating views]
        return ("variant:out" if facts.out_kwarg and not facts.inplace_methods else "variant:inplace"), {}
    if "grad" in facts.modes:
        return "grad", {}
    if facts.out_kwarg and (_VARIANT_WORDS.search(prose) or _both_forms(facts, "out")):
        return "variant:out", {}
    if facts.inplace_methods and (_VARIANT_WORDS.search(prose) or _both_forms(facts, "inplace")):
        return "variant:inplace", {}
    if layout_words and any(c in _STRIDING for c in facts.layout_calls):
        # a transposed, permuted or strided view (no .contiguous() to compare with) in a report about layout
        return "layout:noncontiguous", {}
    for name in facts.modes:
        if name.startswith("autocast:"):
            return name, {}
    if _one_low_dtype_on_two_devices(facts) or facts.cuda and facts.on_cpu and not facts.dtypes:
        # Note [One low dtype on two devices]
        return "device:cuda", {}
    for dtype in facts.dtypes:
        if dtype in LOW_PRECISION:
            return f"dtype:{dtype}", {}
    if facts.cuda:
        return "device:cuda", {}
    # Note [Layout without words]: a repro that converts to channels_last, or makes a strided view contiguous
    # (``.contiguous()``, or ``.clone()`` of a column ``x[:, 2]``, whose elements are a row apart), and runs under no
    # other mode compares layouts even when its prose is only the template's headings
    if facts.memory_format_channels_last:
        return "layout:channels_last", {}
    if facts.contiguous_calls and facts.layout_calls:
        return "layout:noncontiguous", {}
    return None


def _both_forms(facts: CodeFacts, variant: str) -> bool:
    """Note [Both forms in the code]: one op called in its plain form and in its in-place (or out=) form.

    A repro that computes ``torch.addcdiv(a, ...)`` and ``a.addcdiv_(...)`` compares the two spellings whatever its
    prose says; an in-place call of some other op (``x.zero_()``, ``requires_grad_``) is bookkeeping.
    """
    def base(api: str) -> str:
        leaf = api.rsplit(".", 1)[-1]
        return leaf[:-1] if leaf.endswith("_") and not leaf.endswith("__") else leaf

    if variant == "out":
        written = {base(c.api) for c in facts.calls if "out" in c.kwargs}
        return any(base(c.api) in written and "out" not in c.kwargs for c in facts.calls)
    written = {base(name) for name in facts.inplace_methods}
    plain = [*facts.calls, *(c for c in facts.operators if not c.augmented)]  # ``a /= b`` is the in-place form only
    return any(base(c.api) in written and not c.api.endswith("_") for c in plain)


def _from_text(title: str, prose: str, signals: TextSignals) -> tuple[str, str] | None:
    """The mode the text names and where: "text" (the title or a label) or "prose" (only the body's words)."""
    if not prose.strip():
        prose = ""
    for pattern, mode in _TEXT_MODES:
        if pattern.search(title):
            return mode, "text"
    if _TITLE_DEVICE.search(title):
        return "device:cuda", "text"
    for label, mode in _LABEL_MODES:
        if label in signals.labels:
            return mode, "text"
    for pattern, mode in _TEXT_MODES:
        if pattern.search(prose):
            return mode, "prose"
    return None


# Tools that change how the same maths runs, named in the prose ("torch.compile gives incorrect output").
_TOOL_WORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (pattern, mode) for pattern, mode in _TEXT_MODES if mode.startswith(("jit.", "compile:")))


def _area_mode(prose: str, signals: TextSignals) -> str | None:
    """What a report that only ran on an accelerator is about, when the title does not say (Note [Device-only reports]).

    The maintainers' area label (``module: inductor``), else a compiler or tracer the prose names; a device label
    or a prose word for a dtype, layout or gradient is not enough to outrank the device the code ran on.
    """
    for label, mode in _LABEL_MODES:
        if label in signals.labels and not mode.startswith("device:"):
            return mode
    return next((mode for pattern, mode in _TOOL_WORDS if pattern.search(prose)), None)


def _title_mode(title: str) -> str | None:
    return next((mode for pattern, mode in _TEXT_MODES if pattern.search(title)), None)


def _device(facts: CodeFacts, text: str) -> str | None:
    """The accelerator the report ran on: what the code uses, else an MPS/XPU the text names."""
    if facts.devices:
        return "cuda" if "cuda" in facts.devices else facts.devices[0]
    return next((name for name, words in _OTHER_ACCELERATORS if words.search(text)), None)


_ON_A_DEVICE = ("device:cuda", "grad:device:cuda")  # test modes whose `device` option names the accelerator


def _names_devices(text: str) -> bool:
    """The text names the CPU and an accelerator together, or MPS/XPU (compared with the CPU)."""
    return any(pattern.search(text) for pattern, mode in _TEXT_MODES if mode == "device:cuda")


def mode_pair(facts: CodeFacts, title: str, prose: str, signals: TextSignals) -> ModePair | None:
    """The compared pair: reference is eager (fp32, CPU, contiguous) unless stated otherwise.

    Note [Device-only reports]
    Code that runs on an accelerator is the weakest mode evidence: it says where the report ran, not
    what differs. A title that names the condition (non-contiguous, float16, a gradient) wins over
    it; without one, the maintainers' area label (``module: inductor``, ``module: half``) or a compiler
    or tracer the prose names ("torch.compile gives a wrong result") does (``_area_mode``). The device
    is kept as the test mode's ``device`` option. A report that differs between
    the CPU and an accelerator is a ``device:cuda`` pattern: fuzz_core runs it where the device exists
    and records it not_applicable elsewhere; an MPS or XPU report keeps ``device: mps``/``xpu`` as its
    option, so the device it was seen on is never lost. (A compile, trace or precision mode found in
    the code keeps no device option: it runs on the CPU as it always did.)

    Note [Compiled gradients]
    Code that differentiates through compiled code (``backward``/``autograd.grad``/``torch.func.grad``
    around a ``torch.compile``) in a report about gradients is a Gradient_Mismatch whose test mode is
    ``grad:compile:<backend>``: the gradient of the compiled forward against eager autograd. Comparing
    forward outputs (``compile:<backend>``) would never see a backward that compile got wrong.

    Note [Writes into repeating views]
    An in-place method or an out= tensor that writes into an expanded view (``x.expand(...)``,
    ``broadcast_to``, ``as_strided``: elements that share memory) reads values it already overwrote.
    The condition is the layout of the written tensor, so the kind is Layout_Mismatch; what runs is
    the in-place (or out=) spelling against the functional one, so the test mode is ``variant:*``.
    An out= tensor that is a strided view (``out=(v[::4], i[::4])``, ``out=y.t()``, ``out=z[:, 128:384]``) is the
    same condition: the kernel must write through its strides, and the report is about that layout. So is an out=
    tensor that overlaps what the call reads (``torch.add(x, y, out=x)``, ``torch.bmm(a, a.mT, out=a)``) or another
    of its outputs (``out=(t, t)``): which value survives depends on the order of the kernel's reads and writes.
    So is an in-place write whose operand is a view of the tensor it writes (``a -= a[:1]``, ``x.add_(x.t())``,
    ``a[1:] -= a[:-1]``); ``a -= a`` is not (each element is read before it is written).
    """
    title, prose = title.lower(), prose.lower()  # the patterns are lower-case (no re.I: faster)
    found = _from_code(facts, title + "\n" + prose)
    evidence = "code"
    named = _title_mode(title)
    if found is not None and found[0] in facts.modes and named in facts.modes and named != found[0]:
        # the code runs both (trace and script, compile and a gradient); the title says which is reported
        found = (named, facts.modes[named])
    if found is not None and found[0].startswith("dtype:") and named is not None and named.startswith(
            ("compile:", "jit.")):
        # "[inductor] wrong output" over an fp16 model: the dtype is the input's, the title names what is compared
        found, evidence = (named, facts.modes.get(named, {})), "title"
    if found is not None and found[0] == "grad" and facts.devices and _names_devices(title + "\n" + prose):
        # Note [Gradients on a device] (fuzz_core/modes/grad.py): a backward the report ran on an accelerator
        # and compares with the CPU's is checked there, against the CPU's gradients
        found = ("grad:device:cuda", {})
    if found is not None and found[0].startswith("dtype:") and named == "device:cuda" and facts.devices:
        # Note [A title that names only the device]
        found, evidence = ("device:cuda", {}), "title"
    device = None
    if found is not None and found[0] == "device:cuda":
        device = _device(facts, "")
        if named is not None and named != "device:cuda" and not (named.startswith("dtype:")
                                                                and _one_low_dtype_on_two_devices(facts)):
            # the title's condition wins (Note [Device-only reports]); a dtype it names is the one both devices
            # ran (Note [One low dtype on two devices])
            found, evidence = (named, {}), "title"
        elif (area := _area_mode(prose, signals)) is not None:
            found, evidence = (area, {}), "text"
    if found is None:
        text_mode = _from_text(title, prose, signals)
        found = (text_mode[0], {}) if text_mode else None
        evidence = text_mode[1] if text_mode else "text"
    if found is None:
        return None
    name, options = found
    kind = kind_of(name)
    if kind is None:
        return None
    # a pattern's mode options never use the key ``mode``: the formal notation spells the mode's own name with it
    # (torch.compile(mode="max-autotune") is a tuning choice; the pattern without it still validates and runs)
    options = {k: v for k, v in options.items() if isinstance(v, bool | int | float | str) and k != "mode"}
    if name in _ON_A_DEVICE:
        device = _device(facts, title + "\n" + prose)
    if device is not None and not (name in _ON_A_DEVICE and device == "cuda"):
        options["device"] = device
    strided_out = name == "variant:out" and (facts.out_strided or facts.out_overlaps)
    overlapping_inplace = name == "variant:inplace" and facts.inplace_overlaps
    if kind == PatternKind.Variant_Mismatch and (facts.inplace_on_expanded or strided_out or overlapping_inplace):
        kind = PatternKind.Layout_Mismatch
    return ModePair(kind, "eager", name, options, evidence)


# Note [A title that names only the device]
# "[MPS] embedding returns zero rows", "index_select wrong on XPU": the title names the accelerator and no dtype,
# layout, gradient or compiler (those come first in _TEXT_MODES), and the code runs there. A low dtype in that code
# (a bfloat16 table to fit a large case in memory) is the input's, as it is under a title that names a compiler:
# the pair is the device one, with the dtype kept in the trigger. A title that names the dtype keeps the precision
# pair, and so does code on an accelerator under a title that names neither.


# Note [One low dtype on two devices]
# A precision pair compares a low dtype with a higher one. Code whose only floating dtypes are low (bfloat16
# throughout) and that runs on an accelerator and puts tensors on the CPU by name (``.cpu()``, ``device="cpu"``)
# computes in one dtype on two devices: what differs is the device, so the pair is ``device:cuda`` (the dtype
# stays in the trigger). A float32 or float64 anywhere in the code, or no CPU side, leaves the precision pair;
# integer dtypes (indices, a bit pattern viewed as float16) do not count. A title that names the dtype ("float16
# NaN loses its sign on CUDA") names the one dtype both devices ran, so it does not turn the pair back into a
# precision one.


# Note [A non-finite result names the kind]
# Maintainers file "the gradient of X is NaN at zero" as a NaN/Inf bug: the gradient is where the value shows,
# the symptom is a non-finite value where a finite one is due. Pairs that compare two executions of the same
# maths (compile, jit, a device, a layout, a variant) keep their kind: there the symptom is that the two
# disagree. A low-precision result that overflows to inf stays a precision pattern: the value is out of the
# dtype's range, which is precision (its oracle allows float16's tolerance and the transfer rules read its
# dtype). A NaN is different: it is an invalid operation (0/0, inf - inf, an eps that rounds to zero), the
# same class as the gradient's NaN at zero, so a low-precision pair whose title names a NaN, or whose report
# shows torch printing one (``tensor(nan, dtype=torch.float16)``) from inputs that hold none, is a NaN/Inf
# pattern too. A NaN the title names as the *expected* value ("instead of NaN") is not the symptom. The mode
# pair is kept, so the harness still runs the gradient or low-precision side.
NONFINITE_SYMPTOM_KINDS = frozenset({PatternKind.Gradient_Mismatch})
NAN_SYMPTOM_KINDS = frozenset({PatternKind.Precision_Mismatch})
# Pairs that run one computation two ways, where "one way raises" is a symptom (Note [One side raises]).
EXCEPTION_SYMPTOM_KINDS = frozenset({
    PatternKind.JIT_Eager_Mismatch, PatternKind.Compile_Eager_Mismatch, PatternKind.Device_Mismatch,
    PatternKind.Layout_Mismatch, PatternKind.Variant_Mismatch, PatternKind.Batch_Mismatch,
})
_NONFINITE_WORD = re.compile(r"\bnans?\b|\binfs?\b|\binfinity\b|\binfinite\b(?!\s+(?:loop|recursion|wait))|-inf\b"
                             r"|non-?finite", re.I)
_EXPECTED_BEFORE = re.compile(r"(?:instead of|rather than|expected|expect|should (?:be|return|give)|not)\W+(?:\w+\W+)?$",
                              re.I)


def prints_nan(text: str) -> bool:
    """The report shows torch printing a NaN result (Note [A non-finite result names the kind])."""
    return _PRINTED_NAN.search(text) is not None


# torch's print of a tensor, ``tensor([[1.5, -inf], ...])`` (no parentheses inside its values), and a non-finite
# value in it; each match stops at the next parenthesis, so the scan is linear
_PRINTED_TENSOR = re.compile(r"(?<![.\w])tensor\(([^()]*)\)")
_NONFINITE_VALUE = re.compile(r"(?<![\w.])-?inf\b|(?<![\w.])nan\b")


def prints_nonfinite(text: str) -> bool:
    """The report shows torch printing a tensor that holds NaN or ±Inf anywhere in it."""
    return any(_NONFINITE_VALUE.search(match.group(1)) for match in _PRINTED_TENSOR.finditer(text))


def reports_nonfinite(title: str, *, nan_only: bool = False) -> bool:
    """The title names a NaN/Inf (with `nan_only`, a NaN) the code produced (not one it should have produced)."""
    for match in _NONFINITE_WORD.finditer(title):
        if nan_only and not match.group().lower().startswith("nan"):
            continue
        if not _EXPECTED_BEFORE.search(title[max(0, match.start() - 40):match.start()]):
            return True
    return False


# Note [One side raises]
# "baddbmm raises an error but baddbmm_ succeeds", "throws on the CPU but runs successfully on the GPU": the two
# runs of one computation disagree on whether it is defined at all. That is an Exception_Mismatch on the pair the
# report compares (its oracle: both raise or neither does), not a value mismatch: the side that succeeds has no
# value to compare with. It needs both halves in the reporter's words: an error that was raised (a pasted
# ``SomethingError:`` line, "raises/throws an error/exception") and a run that succeeded ("succeeds",
# "successfully", "runs fine"). "No error, but the values are wrong" is the usual silent bug and says neither, and
# an AssertionError is the repro's own comparison failing, not a side that raised.
_RAISED = re.compile(r"\b(?!assertion)[a-z]*error: |\b(?:raise[sd]?|throws?|thrown|threw)\b(?: \w+)?(?: an?)? (?:error|exception)\b")
_SUCCEEDED = re.compile(r"\bsucceed(?:s|ed)?\b|\bsuccessfully\b|\b(?:runs?|works?|ran|worked) fine\b")


def one_side_raises(text: str) -> bool:
    """The report contrasts a run that raised with one that succeeded (Note [One side raises])."""
    text = text.lower()
    return bool(_RAISED.search(text)) and bool(_SUCCEEDED.search(text))


# torch's own print of a NaN result, ``tensor(nan, dtype=torch.float16)`` or ``tensor([nan, 1.])``, as pasted
# output shows it (the code spells the constructor torch.tensor, so a preceding dot or name is not it)
_PRINTED_NAN = re.compile(r"(?<![.\w])tensor\(\[*\s*nan\b")


def symptom_kind(kind: PatternKind, title: str, prose: str = "", *, printed_nan: bool = False) -> PatternKind:
    """The kind the report's symptom names: NaN_Inf where a gradient pair reports a non-finite result or a
    low-precision pair a NaN (in the title, or ``printed_nan``: the report shows torch printing one from finite
    inputs), Exception_Mismatch where one side of the pair raised and the other succeeded, else ``kind``."""
    if kind in NONFINITE_SYMPTOM_KINDS and reports_nonfinite(title):
        return PatternKind.NaN_Inf
    if kind in NAN_SYMPTOM_KINDS and (printed_nan or reports_nonfinite(title, nan_only=True)):
        return PatternKind.NaN_Inf
    if kind in EXCEPTION_SYMPTOM_KINDS and one_side_raises(title + "\n" + prose):
        return PatternKind.Exception_Mismatch
    return kind
