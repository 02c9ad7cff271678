"""Built-in mutators: gaussian noise, special values, dtype boundaries, layout change, small shape change."""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.layout import noncontiguous_copy
from fuzz_core.mutators.base import randbelow
from fuzz_core.mutators.values import SPECIAL_VALUE_NAMES, boundary_values, special_value
from fuzz_core.tensors import map_tensors, replace_leaf, tensor_leaves


def _edit_one(sample: Sample, gen: torch.Generator, edit, label: str) -> Sample | None:  # type: ignore[no-untyped-def]
    """Apply `edit(tensor, gen)` to one randomly chosen floating tensor leaf (non-empty)."""
    args = sample.args
    if not sample.kwargs and all([type(a) is torch.Tensor for a in args]):
        # Plain tensor arguments (the common call): the leaves are the arguments themselves (Note [Mutation cost]).
        candidates = [i for i, t in enumerate(args) if t.is_floating_point() and t.numel() > 0]
        if not candidates:
            return None
        chosen = candidates[randbelow(len(candidates), gen)]
        new = list(args)
        new[chosen] = edit(args[chosen], gen)
        return Sample(tuple(new), {}, sample.ctor, f"{sample.origin}>{label}")
    tree = sample.tree()
    leaves = tensor_leaves(tree)
    candidates = [i for i, t in enumerate(leaves) if t.is_floating_point() and t.numel() > 0]
    if not candidates:
        return None
    chosen = candidates[randbelow(len(candidates), gen)]
    return sample.with_tree(replace_leaf(tree, chosen, edit(leaves[chosen], gen)), origin=f"{sample.origin}>{label}")


_DRAWS = torch.empty(1 + 3, dtype=torch.int64)  # _positions' draws, reused
_ONE_DRAW_RANGE = 1 << 28  # random_(0, n) takes n's remainder of one 32-bit draw below this range (pinned in tests)


def _positions(t: torch.Tensor, gen: torch.Generator, most: int = 3) -> torch.Tensor:
    """Up to `most` distinct flat positions of `t`: `torch.randperm(t.numel(), generator=gen)[:count]` with `count`
    drawn first as `1 + randbelow(most)`, the same positions. randperm shuffles all n positions (Fisher-Yates, one
    draw per step: `random() % (n - i)`, the draw randbelow makes), but the first `count` positions are fixed after
    `count` steps: a partial shuffle of those steps gives them without the O(n) permutation. Its draws are made in
    one call: `random_(0, L)` for L a multiple of every modulus takes each draw's remainder by L, whose remainder by
    the modulus is the draw's own. The generator's state afterwards differs from randperm's (fewer draws); its
    callers draw nothing after it (Note [Mutation cost])."""
    n = t.numel()
    if n <= max(64, most):  # a small permutation costs less than the partial shuffle's Python
        count = 1 + randbelow(most, gen)
        return torch.randperm(n, generator=gen)[:count]
    steps = min(most, n - 1)
    moduli = [most, *range(n, n - steps, -1)]
    bound = math.lcm(*moduli)
    if bound < _ONE_DRAW_RANGE and steps + 1 <= _DRAWS.numel():
        draws = _DRAWS[:steps + 1].random_(0, bound, generator=gen).tolist()
        count = 1 + draws[0] % most
        picks = [draws[1 + i] % (n - i) for i in range(min(count, steps))]
    else:
        count = 1 + randbelow(most, gen)
        picks = [randbelow(n - i, gen) for i in range(min(count, steps))]
    moved: dict[int, int] = {}  # position -> the value the shuffle put there (absent: its own index)
    chosen = []
    for i, pick in enumerate(picks):
        z = i + pick
        here, there = moved.get(i, i), moved.get(z, z)
        moved[i], moved[z] = there, here
        chosen.append(there)
    return torch.tensor(chosen, dtype=torch.int64)


# Note [Mutation cost]
# Mutation runs once per input, so its edits are whole-tensor torch ops on one tensor with no per-element Python:
# noise is added in the tensor's own dtype where that rounds exactly as the float64 sum rounded back did (float32
# and float64 operands: float64 carries more than 2p+2 bits for a float32 sum, so the double rounding is
# innocuous), special and boundary values go in with one index_fill_ at distinct positions (what the indexed
# assignment wrote), the value table per dtype and a parent's mean magnitude are worked out once, and draws reuse
# one buffer (`randbelow`). Each seed's stream of inputs is what it was.


_SPREADS: dict[int, tuple[weakref.ref, int, float]] = {}  # id(tensor) -> (the tensor, its version, its spread)


def _spread(t: torch.Tensor) -> float:
    """The noise scale of `t`: its mean magnitude (1 where that is 0, NaN or Inf). Remembered per tensor while it
    lives unchanged (same object, same version counter): the parent is a corpus entry, picked again and again
    (Note [Mutation cost])."""
    key = id(t)
    known = _SPREADS.get(key)
    if known is not None and known[0]() is t and known[1] == t._version:
        return known[2]
    spread = float(t.float().abs().mean()) if t.numel() else 1.0
    spread = spread if spread > 0 and spread == spread and spread != float("inf") else 1.0
    if len(_SPREADS) >= 1024:
        _SPREADS.clear()
    try:
        _SPREADS[key] = (weakref.ref(t), t._version, spread)
    except (TypeError, RuntimeError):  # no weak reference or no version counter (inference tensors): not kept
        pass
    return spread


@dataclass
class GaussianNoise:
    name: str = "gaussian"
    scale: float = 0.1
    weight: float = 4.0

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        def edit(t: torch.Tensor, g: torch.Generator) -> torch.Tensor:
            spread = _spread(t)
            noise = torch.randn(t.shape, generator=g).mul_(self.scale * spread)
            if t.dtype is torch.float32 and t.is_contiguous():
                return noise.add_(t)  # Note [Mutation cost]: the same values as the float64 round trip
            if t.dtype is torch.float64 and t.is_contiguous():
                return t + noise
            return (t.double() + noise.double()).to(t.dtype)

        return _edit_one(sample, gen, edit, self.name)


@dataclass
class SpecialValues:
    name: str = "special"
    weight: float = 3.0
    values: tuple[str, ...] = SPECIAL_VALUE_NAMES

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        value_name = self.values[randbelow(len(self.values), gen)]

        def edit(t: torch.Tensor, g: torch.Generator) -> torch.Tensor:
            out = t.contiguous().clone()
            out.view(-1).index_fill_(0, _positions(out, g), special_value(value_name, t.dtype))
            return out

        return _edit_one(sample, gen, edit, f"{self.name}:{value_name}")


@dataclass
class DtypeBoundary:
    name: str = "boundary"
    weight: float = 2.0

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        def edit(t: torch.Tensor, g: torch.Generator) -> torch.Tensor:
            values = boundary_values(t.dtype)
            out = t.contiguous().clone()
            value = values[randbelow(len(values), g)]  # drawn before the positions, as `flat[positions] = value` did
            out.view(-1).index_fill_(0, _positions(out, g), value)
            return out

        return _edit_one(sample, gen, edit, self.name)


@dataclass
class LayoutChange:
    """The same values as a strided view: kernels with a non-contiguous path get exercised."""

    name: str = "layout"
    weight: float = 1.0  # structural changes force a recompile in compiled modes: keep them rarer

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        if not any(t.numel() > 1 for t in tensor_leaves(sample.tree())):
            return None
        return sample.with_tree(map_tensors(sample.tree(), noncontiguous_copy), origin=f"{sample.origin}>layout")


@dataclass
class SmallShapeChange:
    """Grow or shrink one dimension by one in every tensor that shares the first tensor's shape."""

    name: str = "shape"
    weight: float = 1.0

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        leaves = tensor_leaves(sample.tree())
        if not leaves or leaves[0].dim() == 0:
            return None
        shape = leaves[0].shape
        dim = randbelow(len(shape), gen)
        grow = bool(randbelow(2, gen)) or shape[dim] <= 1

        def change(t: torch.Tensor) -> torch.Tensor:
            if t.shape != shape:
                return t
            if grow:
                extra = t.narrow(dim, 0, 1).clone() if t.shape[dim] else torch.zeros(
                    *t.shape[:dim], 1, *t.shape[dim + 1:], dtype=t.dtype)
                return torch.cat([t, extra], dim=dim)
            return t.narrow(dim, 0, t.shape[dim] - 1).clone()

        return sample.with_tree(map_tensors(sample.tree(), change), origin=f"{sample.origin}>shape")


def _trigger_mutators() -> tuple:
    from fuzz_core.mutators.triggers import Broadcast, MemoryFormat, OverlappingView, ZeroSizeDim

    return (ZeroSizeDim(), OverlappingView(), MemoryFormat(), Broadcast())


# Value mutators first (they never recompile a compiled mode), then structural and trigger-aware ones.
DEFAULT_MUTATORS = (GaussianNoise(), SpecialValues(), DtypeBoundary(), LayoutChange(), SmallShapeChange(),
                    *_trigger_mutators())
