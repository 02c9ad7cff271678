"""Write the short repro a maintainer pastes into an issue: inline tensors, both calls, the float64 value, exit 1.

Inert by construction, like the long script (Note [Inert repros] in fuzz_core/repro_text.py): the
text is this module's template; free text only in `#` comments through `comment_lines`; the API
only when it is a checked public torch name (fuzz_core/api_names.py); every value a literal
written here from typed data. A float element is written as the shortest decimal that converts
back to the same bits in its dtype, else exactly with float.fromhex.

Only what has a one-line plain-torch form is written (plain `torch.*` callables; eager, compile,
dtype, autocast, jit.trace, layout and variant modes; up to MAX_INLINE_ELEMENTS elements); anything
else raises NoShortRepro with the reason, and the long script with its .safetensors stays the repro.
The layout and variant forms build what fuzz_core/modes/layout.py and variant.py build: a
non-contiguous view over a buffer whose gaps hold 7, a channels_last copy, a clone for the method
and in-place spellings, an out= tensor filled with 7.
"""

from __future__ import annotations

import math
import re
from typing import Any

import torch

from fuzz_core.api_names import rejection_reason
from fuzz_core.custom_functions import CUSTOM_FUNCTION_API
from fuzz_core.inputs import Sample
from fuzz_core.oracles.closeness import comparison_source
from fuzz_core.oracles.tolerance import DTYPE_PRECISIONS, LOW_PRECISION_ULPS
from fuzz_core.repro_text import checked_name, comment_lines, literal_source, one_line
from fuzz_core.spec import HarnessSpec
from fuzz_core.target import Target

MAX_INLINE_ELEMENTS = 64
MAX_LINES = 22  # "at most ~20 lines": anything longer is not the short repro the issue asks for
_OUTPUT_PATH = re.compile(r"(?:\[\d+\]|\.?[A-Za-z_][A-Za-z0-9_]*)*")
_INT_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


class NoShortRepro(ValueError):
    """This finding has no short plain-torch form (the reason says why); the long script stands."""


def float_literal(value: float, dtype: torch.dtype) -> str:
    """The shortest decimal that converts to the same `dtype` bits; float.fromhex when none does."""
    if math.isnan(value):
        return 'float("nan")'
    if math.isinf(value):
        return 'float("inf")' if value > 0 else '-float("inf")'
    want = torch.tensor([value], dtype=dtype)
    for digits in range(1, 18):
        text = f"{value:.{digits}g}"
        if "e" not in text and "." not in text:
            text += ".0"
        got = torch.tensor([float(text)], dtype=dtype)
        if torch.equal(got.view(torch.uint8), want.view(torch.uint8)):
            return text
    return f"float.fromhex({value.hex()!r})"


def _nested(values: list[Any], shape: list[int], write: Any) -> str:
    if not shape:
        return write(values[0])
    step = len(values) // shape[0] if shape[0] else 0
    return "[" + ", ".join(_nested(values[i * step:(i + 1) * step], shape[1:], write) for i in range(shape[0])) + "]"


def tensor_literal(t: torch.Tensor) -> str:
    """`torch.tensor([...], dtype=...)` holding exactly `t`'s values (contiguous, real or bool dtypes)."""
    dtype = literal_source(t.dtype)
    if t.is_complex() or t.layout != torch.strided:
        raise NoShortRepro(f"a {t.dtype} {t.layout} tensor has no inline literal here")
    if t.numel() == 0:
        return f"torch.empty({literal_source(tuple(t.shape))}, dtype={dtype})"
    flat = t.detach().reshape(-1)
    if t.is_floating_point():
        write = lambda v: float_literal(float(v), t.dtype)  # noqa: E731
        values = flat.double().tolist()
    elif t.dtype == torch.bool or t.dtype in _INT_DTYPES:
        write = literal_source
        values = flat.tolist()
    else:
        raise NoShortRepro(f"no inline literal for {t.dtype}")
    return f"torch.tensor({_nested(values, list(t.shape), write)}, dtype={dtype})"


class _Arguments:
    """The call's argument text with tensors named x0, x1, ... (assigned above the calls)."""

    def __init__(self, sample: Sample) -> None:
        self.assignments: list[str] = []
        self.names: list[str] = []
        self.tensors: list[torch.Tensor] = []
        self.floating: list[str] = []
        self.args = [self._value(v) for v in sample.args]
        self.kwargs = [f"{checked_name(str(k))}={self._value(v)}" for k, v in sample.kwargs.items()]

    def _value(self, value: Any) -> str:
        if isinstance(value, torch.Tensor):
            name = f"x{len(self.names)}"
            self.assignments.append(f"{name} = {tensor_literal(value)}")
            self.names.append(name)
            self.tensors.append(value)
            if value.is_floating_point():
                self.floating.append(name)
            return name
        if isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
            inner = ", ".join(self._value(v) for v in value)
            return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
        try:
            return literal_source(value)
        except ValueError as exc:
            raise NoShortRepro(str(exc)) from None

    def call(self, fn: str, cast: str = "", *, rename: dict[str, str] | None = None, first: int = 0,
             extra: str = "") -> str:
        """`fn(args[first:], extra)`, floating tensors written as `x0<cast>` (e.g. `.double()`) and
        tensors in `rename` by their new name."""
        names = set(self.floating) if cast else set()
        rename = rename or {}

        def sub(text: str) -> str:
            def one(m: re.Match[str]) -> str:
                name = rename.get(m.group(0), m.group(0))
                return name + cast if m.group(0) in names else name
            return re.sub(r"\bx\d+\b", one, text)

        parts = [sub(a) for a in self.args[first:]] + [sub(k) for k in self.kwargs] + ([extra] if extra else [])
        return f"{fn}({', '.join(parts)})"

    def relaid(self, layout: str) -> tuple[list[str], dict[str, str]]:
        """Lines assigning y<i>, x<i>'s values in `layout`, for the tensors layout.py would change."""
        lines, rename = [], {}
        for name, t in zip(self.names, self.tensors):
            if layout == "noncontiguous" and t.dim() > 0 and t.numel() > 1:
                how = f"torch.stack([{name}, torch.full_like({name}, 7)], -1).flatten(-2)[..., ::2]"
            elif layout == "channels_last" and t.dim() in (4, 5):
                how = f"{name}.contiguous(memory_format=torch.channels_last{'_3d' if t.dim() == 5 else ''})"
            else:
                continue
            rename[name] = "y" + name[1:]
            lines.append(f"{rename[name]} = {how}  # {name}'s values, {layout}")
        return lines, rename


def _output_accessor(path: str) -> str:
    if path in ("", "out"):
        return ""
    if not _OUTPUT_PATH.fullmatch(path):
        raise NoShortRepro(f"output path {one_line(path)[:40]!r} is not an accessor")
    return re.sub(r"(^|\])([A-Za-z_])", lambda m: m.group(1) + "." + m.group(2), path) if not path.startswith(".") \
        else path


def _mode_call(mode: str, options: dict[str, Any], api: str, arguments: _Arguments, dynamic: bool,
               target: Target) -> tuple[list[str], str]:
    """(lines before, expression) computing `mode`'s result; with lines, the last assigns `res`."""
    if mode == "eager":
        return [], arguments.call(api)
    family, _, detail = mode.partition(":")
    if family == "layout" and detail in ("noncontiguous", "channels_last"):
        lines, rename = arguments.relaid(detail)
        return [*lines, f"res = {arguments.call(api, rename=rename)}"], ""
    if family == "variant" and arguments.args[:1] and arguments.args[0] in arguments.names:
        first = arguments.args[0]
        if detail == "method" and target.method_name and not api.startswith("torch.Tensor."):
            return [], arguments.call(f"{first}.clone().{checked_name(target.method_name)}", first=1)
        if detail == "inplace" and target.inplace_name:  # an in-place method returns the tensor it wrote
            return [], arguments.call(f"{first}.clone().{checked_name(target.inplace_name)}", first=1)
        if detail == "out" and not api.startswith("torch.Tensor."):
            return [], arguments.call(api, extra="out=torch.full_like(ref, 7)")
    if family == "compile":
        extra = "".join(f", {k}={literal_source(options[k])}" for k in ("mode", "fullgraph") if k in options)
        if dynamic or options.get("dynamic"):
            extra += ", dynamic=True"
        return [], arguments.call(f"torch.compile({api}, backend={literal_source(checked_name(detail))}{extra})")
    if family == "dtype":
        low = literal_source(getattr(torch, checked_name(detail)))
        return [], arguments.call(api, cast=f".to({low})")
    if family == "autocast":
        low = literal_source(getattr(torch, checked_name(detail)))
        return [f'with torch.autocast("cpu", dtype={low}):', f"    res = {arguments.call(api)}"], ""
    if mode == "jit.trace":
        names = ", ".join(arguments.names)
        inputs = f"({names},)" if len(arguments.names) == 1 else f"({names})"
        return [], f"torch.jit.trace(lambda {names}: {arguments.call(api)}, {inputs})({names})"
    raise NoShortRepro(f"mode {one_line(mode)[:40]!r} has no one-line plain-torch form here")


# The value comparison: the fuzzer's own close_enough (pasted above it, Note [One comparison] in
# oracles/closeness.py), then its float64 measure (minimise_finding.fp64_distance, printed as the figures).
_COMPARE_VALUES = '''def err(t):  # largest distance from the float64 value; NaN where float64 is a number counts as infinite
    return max(torch.where((t.double() == f64) | (t.isnan() & f64.isnan()), 0.0, (t.double() - f64).abs().nan_to_num(nan=float("inf"), posinf=float("inf"))).flatten().tolist(), default=0.0)
close = bool(close_enough({ref_as_compared}, res, rtol={rtol}, atol={atol}{slack}).all())
print(f"close (the fuzzer's comparison, default tolerances of {{res.dtype}}): {{close}}; error vs float64: {ref_label} {{err(ref):.6g}}, {test_label} {{err(res):.6g}}")
sys.exit(1 if not close and err(res) > err(ref) else 0)'''

_COMPARE_NAN_INF = '''bad = ~torch.isfinite(res) & torch.isfinite(f64) & torch.isfinite(ref)
print(f"NaN/Inf in {test_label} where float64 and {ref_label} are finite: {{int(bad.sum())}}")
sys.exit(1 if bool(bad.any()) else 0)'''

_COMPARE_STRUCTURE = '''print("shape/dtype:", tuple(ref.shape), ref.dtype, "vs", tuple(res.shape), res.dtype)
sys.exit(1 if ref.shape != res.shape or {compare_dtype}ref.dtype != res.dtype else 0)'''


def render_short_repro(spec: HarnessSpec, target: Target, sample: Sample, failure_key: str, *,
                       dynamic: bool = False) -> str:
    """The script's text; NoShortRepro when this finding has no short plain-torch form."""
    if target.code or target.is_module_class or target.opinfo_call is not None:
        raise NoShortRepro("the target is not a plain torch function call (harness code, module or OpInfo variant)")
    if target.api == CUSTOM_FUNCTION_API:
        raise NoShortRepro("the custom Functions under test are defined in the full repro (Note [Custom autograd "
                           "Functions])")
    if rejection_reason(target.api) is not None or not target.api.startswith("torch."):
        raise NoShortRepro(f"{one_line(target.api)[:60]!r} is not a checked public torch API")
    api = checked_name(target.api)
    if sum(t.numel() for t in _tensors(sample)) > MAX_INLINE_ELEMENTS:
        raise NoShortRepro(f"more than {MAX_INLINE_ELEMENTS} elements: the input stays in the .safetensors file")
    kind, _, path = failure_key.partition(":")
    accessor = _output_accessor(path) if kind != "exception" else ""
    arguments = _Arguments(sample)
    if spec.test_mode == "variant:out" and path not in ("", "out"):
        raise NoShortRepro("out= with several outputs is left to the long script")
    ref_lines, ref_expr = _mode_call(spec.reference_mode, {}, api, arguments, False, target)
    test_lines, test_expr = _mode_call(spec.test_mode, spec.mode_options, api, arguments, dynamic, target)
    if ref_lines:
        raise NoShortRepro("the reference mode needs a block; only the test mode may")
    ref_label, test_label = one_line(spec.reference_mode), one_line(spec.test_mode)
    lines = [*comment_lines(f"{api}: {test_label} vs {ref_label} ({spec.kind or spec.oracle}); exits 1 when it "
                            f"reproduces. Found by TransFuzz with torch {torch.__version__}.")]
    lines += ["import sys", "import torch"]
    if spec.test_mode.startswith("compile:"):
        lines += ["import torch._inductor.config", "torch._inductor.config.fallback_random = True  # equal RNG state"]
    lines += arguments.assignments
    lines.append(f"ref = {ref_expr}{accessor}  # {ref_label}")
    if kind == "exception":
        if test_lines:
            raise NoShortRepro("an exception under a block-form mode is left to the long script")
        lines += ["print(ref)", "try:", f"    res = {test_expr}",
                  "except Exception as exc:", f'    print(f"{test_label} raises: {{type(exc).__name__}}: {{exc}}")',
                  "    sys.exit(1)", f'print("{test_label} returns too:", res)', "sys.exit(0)"]
        return _finish(lines)
    if test_lines:
        lines += test_lines[:-1] + [test_lines[-1] + accessor + f"  # {test_label}"]
    else:
        lines.append(f"res = {test_expr}{accessor}  # {test_label}")
    lines.append(f"f64 = {arguments.call(api, cast='.double()')}{accessor}  # the float64 value")
    lines.append(f'print("{ref_label}:", ref, "{test_label}:", res, "float64:", f64, sep="\\n")')
    if kind == "nan_inf":
        lines += _COMPARE_NAN_INF.format(ref_label=ref_label, test_label=test_label).splitlines()
    elif kind in ("value",):
        rtol, atol = _tolerances(sample, spec)
        low = spec.test_mode.startswith(("dtype:", "autocast:"))  # the oracle's low_dtype: it rounds ref first
        ref_as_compared = "ref.to(res.dtype)" if low else "ref"
        slack = f", slack=rounding_slack({ref_as_compared}, res, {literal_source(LOW_PRECISION_ULPS)})" if low else ""
        lines += comparison_source(with_slack=low).replace("\n\n", "\n").splitlines()
        lines += _COMPARE_VALUES.format(rtol=literal_source(rtol), atol=literal_source(atol), ref_label=ref_label,
                                        test_label=test_label, ref_as_compared=ref_as_compared,
                                        slack=slack).splitlines()
    else:
        compare_dtype = "" if not spec.test_mode.startswith(("dtype:", "autocast:")) else "False and "
        lines += _COMPARE_STRUCTURE.format(compare_dtype=compare_dtype).splitlines()
    return _finish(lines)


def _tensors(sample: Sample) -> list[torch.Tensor]:
    from fuzz_core.tensors import tensor_leaves

    return tensor_leaves(sample.tree())


def _tolerances(sample: Sample, spec: HarnessSpec) -> tuple[float, float]:
    """assert_close's defaults for the dtype the test mode computes in (the input's, or the low dtype)."""
    family, _, detail = spec.test_mode.partition(":")
    if family in ("dtype", "autocast"):
        dtype = getattr(torch, detail)
    else:
        floating = [t.dtype for t in _tensors(sample) if t.is_floating_point()]
        dtype = floating[0] if floating else torch.float32
    return DTYPE_PRECISIONS.get(dtype, (1.3e-6, 1e-5))


def _finish(lines: list[str]) -> str:
    import ast

    script = "\n".join(lines) + "\n"
    ast.parse(script)  # a template bug fails here, not in a maintainer's terminal
    if len(lines) > MAX_LINES:
        raise NoShortRepro(f"{len(lines)} lines: not short (more than {MAX_LINES})")
    return script
