"""`variant:decomp`: the call with each ATen op that has a reference decomposition run as that decomposition.

Note [An op against its own decomposition]
torch._decomp holds Python decompositions of ATen ops into other ATen ops (``upsample_bilinear2d`` into
index arithmetic and lerps, ``native_layer_norm`` into mean, var and rsqrt): written apart from the C++
kernels, checked against them by PyTorch's own test_decomp, and what inductor and export lower through. Running
the call with its ops decomposed is a second, independent computation of the same values in eager: a kernel
whose formula is wrong (an interpolation that picks the wrong source pixel for one output size, a kernel path
that drops a term) disagrees with its decomposition, and a decomposition that is wrong is what every compiled
program inherits. It is the differential check for a report whose wrong result has no second mode (a regression
against an older release, a value worked out by hand).

Only the ops the call reaches at the top of the dispatcher are decomposed (ops inside a decomposition run as
kernels), views are never decomposed (a view's decomposition would copy, and aliasing is part of the contract),
and neither are ops that draw random numbers (a decomposition draws a different stream). A decomposition that
returns NotImplemented or raises NotImplementedError does not cover the call's case, and the kernel runs it; any
other error where the kernel returns is a difference (a decomposition that rejects a valid input fails every
compiled program that reaches it). A call none of whose ops was decomposed cannot be checked this way:
NotApplicable, with the ops it ran.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from fuzz_core.inputs import Sample
from fuzz_core.modes.base import Mode, NotApplicable, bound_callable
from fuzz_core.target import Target
from fuzz_core.tensors import map_tensors

MODE_NAME = "variant:decomp"


def _decompositions() -> dict[Any, Any]:
    from torch._decomp import decomposition_table

    return decomposition_table


def _decomposable(func: Any) -> bool:
    tags = getattr(func, "tags", ())
    return not getattr(func, "is_view", False) and torch.Tag.nondeterministic_seeded not in tags


class DecomposeOps(TorchDispatchMode):
    """Runs each decomposable ATen op the call dispatches as its torch._decomp decomposition; records which."""

    def __init__(self) -> None:
        super().__init__()
        self.decomposed: list[str] = []
        self.kernels: list[str] = []
        self._table = _decompositions()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 - torch's protocol
        kwargs = kwargs or {}
        decomposition = self._table.get(func) if _decomposable(func) else None
        if decomposition is not None:
            try:
                result = decomposition(*args, **kwargs)
            except NotImplementedError:  # the decomposition does not cover this case: the kernel runs it
                result = NotImplemented
            if result is not NotImplemented:
                self.decomposed.append(str(func))
                return result
        self.kernels.append(str(func))
        return func(*args, **kwargs)


class DecompMode(Mode):
    """The target with its ATen ops run as their reference decompositions (Note [An op against its own
    decomposition])."""

    def run(self, target: Target, sample: Sample) -> Any:
        fn = bound_callable(target, sample)
        args, kwargs = map_tensors(sample.tree(), lambda t: t.clone())
        recorder = DecomposeOps()
        with recorder:
            result = fn(*args, **kwargs)
        if not recorder.decomposed:
            ran = ", ".join(sorted(set(recorder.kernels))[:4]) or "no ATen op"
            raise NotApplicable(f"{self.name}: no op of this call has a decomposition in torch._decomp (ran {ran})")
        return result

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        return '''
from torch._decomp import decomposition_table
from torch.utils._python_dispatch import TorchDispatchMode


class DecomposeOps(TorchDispatchMode):
    """Each ATen op the call dispatches (views and random ops aside) runs as its torch._decomp decomposition."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        seeded = torch.Tag.nondeterministic_seeded in getattr(func, "tags", ())
        decomposition = None if func.is_view or seeded else decomposition_table.get(func)
        if decomposition is not None:
            try:
                result = decomposition(*args, **kwargs)
            except NotImplementedError:
                result = NotImplemented
            if result is not NotImplemented:
                return result
        return func(*args, **kwargs)


def run_mode(fn, args, kwargs):
    args, kwargs = torch.utils._pytree.tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, (args, kwargs))
    with DecomposeOps():
        return fn(*args, **kwargs)
'''


def make_decomp(name: str, options: dict) -> Mode:
    if name != MODE_NAME:
        raise KeyError(name)
    return DecompMode(name=name, options=options)
