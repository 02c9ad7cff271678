"""Where a divergence starts: first differing ATen op or module, and compile-stage bisection.

Given one failing input and two modes, the op and module localisers run both modes under a
recorder, align the two traces, and name the first op / module whose output differs beyond
the lower-precision side's tolerance. For torch.compile mismatches the ops run inside
generated kernels, so localisation moves up a level: the same function is compiled with
successively deeper backends (eager → aot_eager → aot_eager_decomp_partition → inductor) and the
first backend that reproduces the difference names the stage; PyTorch's CompilerBisector can
then narrow inductor down to a subsystem.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from fuzz_core.instrument.modules import ModuleRecorder
from fuzz_core.instrument.ops import OpRecord, OpRecorder
from fuzz_core.instrument.stats import flat_tensors
from fuzz_core.oracles.closeness import close_enough
from fuzz_core.oracles.tolerance import tolerance_for

BACKEND_STAGES: dict[str, str] = {
    "eager": "Dynamo graph capture (bytecode → FX graph)",
    "aot_eager": "AOTAutograd tracing (functionalisation)",
    "aot_eager_decomp_partition": "decompositions and partitioner",
    "inductor": "Inductor lowering and code generation",
}


@dataclass
class Divergence:
    level: str  # "op" or "module"
    index: int  # position in the reference trace
    name: str  # ATen op ("aten.sigmoid.default") or module qualified name
    module_type: str | None
    max_abs_diff: float
    max_rel_diff: float
    # The op's inputs agreed between modes, so the op itself introduced the difference
    # (None where inputs were not compared).
    introduced: bool | None

    def to_dict(self) -> dict:
        return {"level": self.level, "index": self.index, "name": self.name,
                "module_type": self.module_type, "max_abs_diff": self.max_abs_diff,
                "max_rel_diff": self.max_rel_diff, "introduced": self.introduced}


def _as_float(t: torch.Tensor) -> torch.Tensor:
    if t.is_quantized:
        t = t.dequantize()
    return t.detach().to(torch.complex128 if t.is_complex() else torch.float64).cpu()


def tensor_difference(ref: torch.Tensor, test: torch.Tensor) -> tuple[bool, float, float]:
    """(differs, max abs diff, max rel diff) with NaN == NaN and per-dtype tolerance."""
    if ref.shape != test.shape:
        return True, float("inf"), float("inf")
    if ref.numel() == 0:
        return False, 0.0, 0.0
    if not (ref.is_floating_point() or ref.is_complex() or ref.is_quantized):
        if test.is_floating_point():
            ref = ref.to(test.dtype)
        else:
            equal = bool(torch.equal(ref.cpu(), test.cpu()))
            diff = 0.0 if equal else float((ref.cpu().double() - test.cpu().double()).abs().max())
            return not equal, diff, diff
    rtol, atol = tolerance_for(
        torch.float32 if ref.is_quantized else ref.dtype, torch.float32 if test.is_quantized else test.dtype
    )
    if ref.is_quantized or test.is_quantized:
        # Quantized values are only defined up to one quantisation step.
        scales = [float(t.q_scale()) for t in (ref, test) if t.is_quantized and t.qscheme() == torch.per_tensor_affine]
        atol = max([atol, *scales])
    a, b = _as_float(ref), _as_float(test)
    close = close_enough(a, b, rtol, atol)  # the one comparison (Note [One comparison] in oracles/closeness.py)
    both = torch.isfinite(a) & torch.isfinite(b)
    diff = (a - b).abs()
    max_abs = float(diff[both].max()) if bool(both.any()) else 0.0
    denom = a.abs().clamp_min(1e-12)
    max_rel = float((diff / denom)[both].max()) if bool(both.any()) else 0.0
    return not bool(close.all()), max_abs, max_rel


def _lists_differ(ref: Sequence[torch.Tensor], test: Sequence[torch.Tensor]) -> tuple[bool, float, float]:
    if len(ref) != len(test):
        return True, float("inf"), float("inf")
    differs, max_abs, max_rel = False, 0.0, 0.0
    for r, t in zip(ref, test, strict=True):
        d, a, rel = tensor_difference(r, t)
        differs, max_abs, max_rel = differs or d, max(max_abs, a), max(max_rel, rel)
    return differs, max_abs, max_rel


def trace_ops(fn: Callable[..., Any], args: Sequence[Any]) -> list[OpRecord]:
    """Every ATen op of fn(*args) with copies of its inputs and outputs."""
    with torch.no_grad(), OpRecorder(with_stats=False, keep_tensors=True) as rec:
        fn(*args)
    return rec.records


# Ops that only move or re-view data: a dtype cast shows up on the lower-precision side but
# computes nothing, so aligning on them would only add noise.
_NEUTRAL_OPS = ("aten._to_copy", "aten.to", "aten.detach", "aten.clone", "aten.copy_", "aten.t.",
                "aten.view", "aten._unsafe_view", "aten.expand", "aten.alias", "aten.lift_fresh")


def _aligned_pairs(ref: list[OpRecord], test: list[OpRecord]) -> list[tuple[OpRecord, OpRecord]]:
    ref_c = [r for r in ref if not r.op.startswith(_NEUTRAL_OPS)]
    test_c = [r for r in test if not r.op.startswith(_NEUTRAL_OPS)]
    matcher = difflib.SequenceMatcher(a=[r.op for r in ref_c], b=[r.op for r in test_c], autojunk=False)
    pairs: list[tuple[OpRecord, OpRecord]] = []
    for block in matcher.get_matching_blocks():
        pairs.extend((ref_c[block.a + k], test_c[block.b + k]) for k in range(block.size))
    return pairs


def first_divergent_op(ref_fn: Callable[..., Any], test_fn: Callable[..., Any], ref_args: Sequence[Any],
                       test_args: Sequence[Any] | None = None) -> Divergence | None:
    """The first ATen op (in the reference's order) whose output differs between two modes.

    Traces are aligned on op names (ignoring casts and views), so modes that insert
    conversions still line up. `introduced` tells whether the op's inputs still agreed.
    """
    ref = trace_ops(ref_fn, ref_args)
    test = trace_ops(test_fn, test_args if test_args is not None else ref_args)
    for r, t in _aligned_pairs(ref, test):
        differs, max_abs, max_rel = _lists_differ(r.outputs or [], t.outputs or [])
        if differs:
            inputs_differ, _, _ = _lists_differ(r.inputs or [], t.inputs or [])
            return Divergence("op", r.index, r.op, None, max_abs, max_rel, not inputs_differ)
    return None


def first_divergent_module(ref_model: nn.Module, test_model: nn.Module, ref_args: Sequence[Any],
                           test_args: Sequence[Any] | None = None) -> Divergence | None:
    """The first module to finish (innermost first) whose output differs between two models.

    Modules are matched by qualified name and call count, so a quantized or half-precision
    copy of the same model (same names, other classes) lines up with the original.
    """
    recorders = []
    for model, args in ((ref_model, ref_args), (test_model, test_args if test_args is not None else ref_args)):
        with torch.no_grad(), ModuleRecorder(model, with_stats=False, keep_tensors=True) as rec:
            model(*args)
        recorders.append(rec)
    test_calls: dict[tuple[str, int], Any] = {}
    seen: dict[str, int] = {}
    for call in recorders[1].calls:
        n = seen.get(call.name, 0)
        seen[call.name] = n + 1
        test_calls[(call.name, n)] = call
    seen.clear()
    for call in recorders[0].calls:
        n = seen.get(call.name, 0)
        seen[call.name] = n + 1
        other = test_calls.get((call.name, n))
        if other is None:
            continue
        differs, max_abs, max_rel = _lists_differ(call.outputs or [], other.outputs or [])
        if differs:
            return Divergence("module", call.order, call.name or "<root>", call.type, max_abs, max_rel, None)
    return None


def outputs_differ(ref: object, test: object) -> bool:
    """Default comparison for backend bisection: any output beyond tolerance."""
    return _lists_differ(flat_tensors(ref), flat_tensors(test))[0]


@dataclass
class BackendBisection:
    first_bad_backend: str | None  # None: no backend reproduced the difference
    stage: str | None
    per_backend: dict[str, bool | str]  # backend → differs (or the error text)
    compiler_bisector: dict | None = None

    def to_dict(self) -> dict:
        return {"first_bad_backend": self.first_bad_backend, "stage": self.stage,
                "per_backend": self.per_backend, "compiler_bisector": self.compiler_bisector}


def bisect_compile_backends(
    fn: Callable[..., Any],
    args: Sequence[Any],
    backends: Sequence[str | tuple[str, Any]] = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor"),
    differs: Callable[[object, object], bool] = outputs_differ,
    use_compiler_bisector: bool = False,
) -> BackendBisection:
    """Compile fn with each backend in turn (shallow → deep); the first one whose output
    differs from plain eager names the compilation stage that introduces the difference.

    A backend may be given as (label, backend callable) to bisect over custom stages.
    With `use_compiler_bisector`, an inductor-stage difference is handed to PyTorch's
    CompilerBisector to find the subsystem (many recompilations: seconds to minutes).
    """
    import torch._dynamo

    with torch.no_grad():
        reference = fn(*args)
    per_backend: dict[str, bool | str] = {}
    first_bad: str | None = None
    for entry in backends:
        label, backend = entry if isinstance(entry, tuple) else (entry, entry)
        torch._dynamo.reset()
        try:
            with torch.no_grad():
                out = torch.compile(fn, backend=backend, dynamic=False)(*args)
        except Exception as exc:  # a backend that fails to compile is its own stage finding
            per_backend[label] = f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            first_bad = first_bad or label
            continue
        bad = bool(differs(reference, out))
        per_backend[label] = bad
        if bad and first_bad is None:
            first_bad = label
    torch._dynamo.reset()
    result = BackendBisection(first_bad, BACKEND_STAGES.get(first_bad or "", first_bad), per_backend)
    if use_compiler_bisector and first_bad is not None:
        result.compiler_bisector = run_compiler_bisector(fn, args, differs, reference)
    return result


def run_compiler_bisector(fn: Callable[..., Any], args: Sequence[Any],
                          differs: Callable[[object, object], bool] = outputs_differ,
                          reference: object | None = None) -> dict | None:
    """PyTorch's CompilerBisector on fn: backend, subsystem and the offending application."""
    import torch._dynamo
    from torch._inductor.compiler_bisector import CompilerBisector

    if reference is None:
        with torch.no_grad():
            reference = fn(*args)

    def good() -> bool:
        torch._dynamo.reset()
        with torch.no_grad():
            # The bisector overrides the backend of torch.compile while it runs.
            out = torch.compile(fn, dynamic=False)(*args)
        return not differs(reference, out)

    found = CompilerBisector.do_bisect(good)
    torch._dynamo.reset()
    if found is None:
        return None
    return {"backend": found.backend, "subsystem": found.subsystem,
            "bisect_number": found.bisect_number, "debug_info": found.debug_info}


COMPILE_STAGE_ORDER = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")


def compile_stages_up_to(backend: str) -> tuple[str, ...]:
    """The shallower backends, then `backend` itself (a custom backend comes last)."""
    if backend in COMPILE_STAGE_ORDER:
        return COMPILE_STAGE_ORDER[: COMPILE_STAGE_ORDER.index(backend) + 1]
    return (*COMPILE_STAGE_ORDER[:-1], backend)


def localise_modes(reference: Any, test: Any, target: Any, sample: Any) -> dict:
    """Localisation evidence for a mismatch between two fuzz-core modes on one input.

    `reference` / `test` are fuzz_core.modes.Mode objects (anything with `.name` and
    `.run(target, sample)`); `sample` is a fuzz_core.inputs.Sample. Non-compile modes get the
    first divergent ATen op; compile modes get backend bisection up to their backend, since
    generated kernels dispatch no ATen ops to record.
    """
    from fuzz_core.modes.base import bound_callable
    from fuzz_core.tensors import clone_tree

    def fresh() -> Any:
        # Each run gets its own copy: in-place ops must not leak between the two modes.
        args, kwargs = clone_tree(sample.tree())
        return type(sample)(tuple(args), dict(kwargs), sample.ctor, sample.origin)

    evidence: dict[str, Any] = {}
    test_name = str(getattr(test, "name", ""))
    if test_name.startswith("compile:"):
        fn = bound_callable(target, sample)
        kwargs = sample.kwargs

        def call(*args: Any) -> Any:
            return fn(*args, **kwargs)

        stages = compile_stages_up_to(test_name.split(":", 1)[1])
        evidence["backend_bisection"] = bisect_compile_backends(call, fresh().args, backends=stages).to_dict()
        return evidence
    div = first_divergent_op(lambda: reference.run(target, fresh()), lambda: test.run(target, fresh()), ())
    evidence["first_divergent_op"] = div.to_dict() if div else None
    return evidence
