"""Built-in mutators: gaussian noise, special values, dtype boundaries, a large shared offset, layout change, small
shape change."""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Callable

import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.layout import noncontiguous_copy
from fuzz_core.mutators.base import ONE_DRAW_RANGE, randbelow, randbelow_pair
from fuzz_core.mutators.values import SPECIAL_VALUE_NAMES, boundary_table, boundary_values, special_value
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


# _draws' buffers, one per length (a slice of one buffer would cost a view per call), reused
_DRAWS = tuple(torch.empty(n, dtype=torch.int64) for n in range(9))


def _draws(moduli: list[int], gen: torch.Generator) -> list[int]:
    """`[randbelow(m, gen) for m in moduli]`, the same values, in one call where it can: `random_(0, L)` for L a
    multiple of every modulus takes each 32-bit draw's remainder by L, whose remainder by the modulus is the draw's
    own (below ONE_DRAW_RANGE; tests/fuzz_core/test_hot_loop_draws.py)."""
    bound = math.lcm(*moduli)
    if bound < ONE_DRAW_RANGE and len(moduli) < len(_DRAWS):
        return [r % m for r, m in zip(_DRAWS[len(moduli)].random_(0, bound, generator=gen).tolist(), moduli)]
    return [randbelow(m, gen) for m in moduli]


# (first modulus, second modulus, element count) -> the moduli of _fill_draws, their common multiple, the buffer
_FILL_PLANS: dict[tuple[int, int, int], tuple[tuple[int, ...], int, torch.Tensor | None]] = {}


def _fill_draws(first: int, second: int, n: int, gen: torch.Generator) -> list[int]:
    """`_draws([first, second, 3, *_shuffle_moduli(n, 3)], gen)`, the same values, with the moduli and their common
    multiple worked out once per (first, second, n) (Note [Mutation cost]): two draws, the count of positions and
    the shuffle's first steps, as the special and boundary values draw them."""
    key = (first, second, n)
    plan = _FILL_PLANS.get(key)
    if plan is None:
        moduli = (first, second, 3, *_shuffle_moduli(n, 3))
        bound = math.lcm(*moduli)
        buffer = _DRAWS[len(moduli)] if bound < ONE_DRAW_RANGE and len(moduli) < len(_DRAWS) else None
        if len(_FILL_PLANS) >= 1024:
            _FILL_PLANS.clear()
        plan = _FILL_PLANS[key] = (moduli, bound, buffer)
    moduli, bound, buffer = plan
    if buffer is None:
        return [randbelow(m, gen) for m in moduli]
    return [r % m for r, m in zip(buffer.random_(0, bound, generator=gen).tolist(), moduli)]


def _shuffle_moduli(n: int, most: int) -> list[int]:
    """The moduli of the first min(most, n - 1) Fisher-Yates steps randperm(n) takes: n, n - 1, ..."""
    return list(range(n, n - min(most, n - 1), -1))


def _shuffled_first(n: int, picks: list[int], count: int) -> list[int]:
    """`randperm(n)[:count]` from the draws of its first steps (`picks`, as _shuffle_moduli's): randperm shuffles
    all n positions (Fisher-Yates, one draw per step: `random() % (n - i)`, the draw randbelow makes), but the
    first positions are fixed after as many steps, so a partial shuffle gives them without the O(n) permutation."""
    moved: dict[int, int] = {}  # position -> the value the shuffle put there (absent: its own index)
    chosen = []
    for i, pick in enumerate(picks[:count]):
        z = i + pick
        here, there = moved.get(i, i), moved.get(z, z)
        moved[i], moved[z] = there, here
        chosen.append(there)
    if count >= n:  # the whole permutation: its last position is what is left
        chosen.append(moved.get(n - 1, n - 1))
    return chosen


def _positions(t: torch.Tensor, gen: torch.Generator, most: int = 3) -> torch.Tensor:
    """Up to `most` distinct flat positions of `t`: `torch.randperm(t.numel(), generator=gen)[:count]` with `count`
    drawn first as `1 + randbelow(most)`, the same positions (a partial shuffle: _shuffled_first). The generator's
    state afterwards differs from randperm's (fewer draws); its callers draw nothing after it (Note [Mutation
    cost])."""
    n = t.numel()
    if n <= max(64, most):  # a small permutation costs less than building the index tensor
        count = 1 + randbelow(most, gen)
        return torch.randperm(n, generator=gen)[:count]
    draws = _draws([most, *_shuffle_moduli(n, most)], gen)
    return torch.tensor(_shuffled_first(n, draws[1:], 1 + draws[0]), dtype=torch.int64)


def _plain_candidates(sample: Sample) -> tuple[list[int], int] | None:
    """For plain tensor arguments (no keywords): the indices of the non-empty floating ones, when there are some
    and they have one element count (so the draws that pick one and its positions can be made at once)."""
    args = sample.args
    if sample.kwargs or not all([type(a) is torch.Tensor for a in args]):
        return None
    candidates = [i for i, t in enumerate(args) if t.is_floating_point() and t.numel() > 0]
    if not candidates:
        return None
    n = args[candidates[0]].numel()
    if any(args[i].numel() != n for i in candidates[1:]):
        return None
    return candidates, n


_NUMPY_FILLS = (torch.float32, torch.float64)  # dtypes _filled writes through numpy: one rounding of a double, as torch


def _filled(sample: Sample, index: int, positions: list[int], value: float, label: str) -> Sample:
    """The sample with argument `index` replaced by a contiguous copy holding `value` at the flat `positions`
    (what index_fill_ wrote there: the value rounded to the tensor's dtype)."""
    out = sample.args[index].clone(memory_format=torch.contiguous_format)  # .contiguous().clone() in one copy
    if out.dtype in _NUMPY_FILLS and not out.requires_grad:
        # Through a numpy view of the copy: one conversion of `value` per element, the one torch's indexed
        # assignment makes (a double rounded once to float32, or kept as a double), without a torch call per
        # position or a torch view (Note [Mutation cost]).
        cells = out.numpy().reshape(-1)  # the copy is contiguous: a view of its memory
        for position in positions:
            cells[position] = value
    else:
        flat = out.view(-1)
        for position in positions:
            flat[position] = value
    args = list(sample.args)
    args[index] = out
    return Sample(tuple(args), {}, sample.ctor, f"{sample.origin}>{label}")


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


_FACTORS: dict[tuple[float, torch.dtype], torch.Tensor] = {}


def _factor(value: float, dtype: torch.dtype) -> torch.Tensor:
    """`value` as a 0-dim tensor of `dtype`, made once per value: multiplying by it gives what multiplying by the
    Python number gives (the number is rounded to the tensor's dtype either way), at half the cost of wrapping
    the number on every call (Note [Mutation cost])."""
    key = (value, dtype)
    factor = _FACTORS.get(key)
    if factor is None:
        if len(_FACTORS) >= 1024:
            _FACTORS.clear()
        factor = _FACTORS[key] = torch.tensor(value, dtype=dtype)
    return factor


_FUSED_NORMAL: list[bool] = []  # _normal_is_scaled_randn's answer, worked out on first use


def _normal_is_scaled_randn() -> bool:
    """Whether `torch.normal(t, std)` gives, bit for bit, `randn(t.shape) * std + t` (std a float32 value) and leaves
    the generator where randn left it, for a contiguous float32 `t` of 16 elements or more: one kernel (normal_fill,
    vectorised 16 at a time, std and mean cast to float32) draws both, and its multiply-add by std and a mean of 0 is
    the rounded product the separate multiplication makes; normal then adds `t` as `add_` does. Checked once on this
    build (a platform where it does not hold keeps the three calls) (Note [Mutation cost])."""
    if not _FUSED_NORMAL:
        ok = True
        for n, std in ((16, 0.0731), (64, 3.3e-7), (100, 2.5e30), (17, 1.0)):
            t = torch.linspace(-3e3, 3e3, n)
            std = float(torch.tensor(std, dtype=torch.float32))
            a, b = torch.Generator().manual_seed(n), torch.Generator().manual_seed(n)
            expected = torch.randn(n, generator=a).mul_(torch.tensor(std)).add_(t)
            got = torch.normal(t, std, generator=b)
            ok = ok and torch.equal(expected.view(torch.int32), got.view(torch.int32)) and torch.equal(
                a.get_state(), b.get_state())
        _FUSED_NORMAL.append(ok)
    return _FUSED_NORMAL[0]


_STDS: dict[float, float] = {}


def _float32_value(value: float) -> float:
    """`value` rounded to float32 (what `_factor(value, torch.float32)` holds), as a Python float."""
    rounded = _STDS.get(value)
    if rounded is None:
        if len(_STDS) >= 1024:
            _STDS.clear()
        rounded = _STDS[value] = float(_factor(value, torch.float32))
    return rounded


# Note [Mutation bursts]
# Choosing a parent and a mutator and making one child costs about as much as the differential check itself on a
# small op (Note [The hot loop] in fuzz_core/campaign.py), and most of it is per call, not per element. So the value
# mutators that edit one argument in place of its values (gaussian, special, boundary) also make BURST children of
# one parent at once, from one reseeded generator: one argument chosen, the draws for every child in one call, the
# children the rows of one batch. The campaign hands them out one input at a time (coverage still sees each), picks
# a burst mutator `BURST` times less often, so each mutator's share of the inputs stays its weight's share, and
# records a burst child's step as (name, seed, row): replaying it remakes the burst from the seed and takes the row.
# A burst needs a plain call (tensor arguments, no keywords) and, for noise, a contiguous float32/float64 argument
# (a child keeps its parent's strides); otherwise, and past BURST_MAX_ELEMENTS, the mutator makes one child per step.
# A child the corpus keeps gets its own copy of the argument the burst made; its other arguments stay the parent's
# tensors, strides and storage offsets included.
BURST = 8
BURST_MAX_ELEMENTS = 1 << 16  # elements in one burst's batch (children are views of it until the corpus keeps one)


def _burst_arguments(sample: Sample, count: int, dtypes: tuple[torch.dtype, ...] | None) -> list[int] | None:
    """Indices of the arguments a burst of `count` children may edit (plain tensor arguments without grad, non-empty,
    floating, of `dtypes` and contiguous where `dtypes` is given, small enough), or None where there is none."""
    args = sample.args
    if sample.kwargs or not all([type(a) is torch.Tensor for a in args]):
        return None
    chosen = [i for i, t in enumerate(args)
              if t.is_floating_point() and 0 < t.numel() * count <= BURST_MAX_ELEMENTS and not t.requires_grad
              and (dtypes is None or (t.dtype in dtypes and t.is_contiguous()))]
    return chosen or None


_ALIGN_BYTES = 64  # a burst's rows start on this boundary, as the allocator's own tensors do


def _burst_rows(t: torch.Tensor, count: int) -> torch.Tensor:
    """A (count, t.numel()) tensor of uninitialised rows for `count` children of `t`, each row starting on an
    _ALIGN_BYTES boundary of one allocation, so a child's data is aligned as a fresh tensor's is (compiled kernels
    may take a vectorised path only for aligned inputs)."""
    n, size = t.numel(), t.element_size()
    padded = -(-n * size // _ALIGN_BYTES) * _ALIGN_BYTES // size
    return torch.empty((count, padded), dtype=t.dtype)[:, :n]


def _burst_children(sample: Sample, index: int, rows: torch.Tensor, labels: list[str]) -> list[Sample]:
    """One child per row of `rows` (the edited argument `index`, shaped as the original), labelled in order."""
    shape = sample.args[index].shape
    children = []
    # one view of the batch and one unbind make every child's tensor (a view per row cost more than the draws)
    for row, label in zip(rows.view(rows.shape[0], *shape).unbind(0), labels):
        new = list(sample.args)
        new[index] = row
        children.append(Sample(tuple(new), {}, sample.ctor, f"{sample.origin}>{label}"))
    return children


# (mutator name, its values, dtype) -> the (label, value) table a burst draws from
_TABLES: dict[tuple[str, tuple[str, ...], torch.dtype], list[tuple[str, float]]] = {}


def _filled_burst(sample: Sample, gen: torch.Generator, count: int,
                  table_for: Callable[[torch.dtype], list[tuple[str, float]]]) -> list[Sample] | None:
    """`count` children, each the sample with one argument (the same for all) holding one value of its dtype's table
    at 1-3 flat positions drawn with replacement (so 1-3 distinct ones): one uniform draw call for every choice, one
    copy of the argument for every child, the values written through numpy where the dtype allows."""
    candidates = _burst_arguments(sample, count, None)
    if candidates is None:
        return None
    draws = torch.rand(1 + 5 * count, dtype=torch.float64, generator=gen).tolist()
    index = candidates[min(int(draws[0] * len(candidates)), len(candidates) - 1)]
    t = sample.args[index]
    values = table_for(t.dtype)
    n = t.numel()
    rows = _burst_rows(t, count)
    rows.copy_(t.reshape(1, n))
    stride = rows.stride(0)
    labels, cells, written = [], [], []
    for child in range(count):
        u = draws[1 + 5 * child: 6 + 5 * child]  # the value, how many positions, three positions
        label, value = values[min(int(u[0] * len(values)), len(values) - 1)]
        labels.append(label)
        for position in u[2: 3 + min(int(u[1] * 3), 2)]:
            cells.append(child * stride + min(int(position * n), n - 1))
            written.append(value)
    flat = rows.as_strided((count * stride,), (1,))  # the whole allocation, padding included
    if rows.dtype in _NUMPY_FILLS:
        cells_view = flat.numpy()
        for cell, value in zip(cells, written):
            cells_view[cell] = value
    else:
        flat[torch.tensor(cells)] = torch.tensor(written, dtype=torch.float64).to(rows.dtype)
    return _burst_children(sample, index, rows, labels)


@dataclass
class GaussianNoise:
    name: str = "gaussian"
    scale: float = 0.1
    weight: float = 4.0
    burst: int = BURST  # Note [Mutation bursts]

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        return _edit_one(sample, gen, self._edit, self.name)

    def mutate_burst(self, sample: Sample, gen: torch.Generator) -> list[Sample] | None:
        """`burst` noisy copies of one contiguous float32/float64 argument, the noise drawn in one call."""
        candidates = _burst_arguments(sample, self.burst, (torch.float32, torch.float64))
        if candidates is None:
            return None
        index = candidates[randbelow(len(candidates), gen)]
        t = sample.args[index]
        rows = _burst_rows(t, self.burst).normal_(0.0, self.scale * _spread(t), generator=gen)
        rows.add_(t.reshape(1, -1))
        return _burst_children(sample, index, rows, [self.name] * self.burst)

    def _edit(self, t: torch.Tensor, g: torch.Generator) -> torch.Tensor:
        if (t.dtype is torch.float32 and t.numel() >= 16 and t.is_contiguous() and not t.requires_grad
                and _normal_is_scaled_randn()):
            # a contiguous float32 tensor of 16 elements or more gets its noise and the sum in one call
            # (Note [Mutation cost]), the values the three calls below make
            return torch.normal(t, _float32_value(self.scale * _spread(t)), generator=g)
        spread = _spread(t)
        noise = torch.randn(size=t.shape, generator=g)
        noise.mul_(_factor(self.scale * spread, noise.dtype))
        if t.dtype is torch.float32 and t.is_contiguous():
            return noise.add_(t)  # Note [Mutation cost]: the same values as the float64 round trip
        if t.dtype is torch.float32 or t.dtype is torch.float64:
            return t + noise  # the same values, and the layout the round trip's sum took from t
        return (t.double() + noise.double()).to(t.dtype)


@dataclass
class SpecialValues:
    name: str = "special"
    weight: float = 3.0
    values: tuple[str, ...] = SPECIAL_VALUE_NAMES
    burst: int = BURST  # Note [Mutation bursts]

    def mutate_burst(self, sample: Sample, gen: torch.Generator) -> list[Sample] | None:
        return _filled_burst(sample, gen, self.burst, self._table)

    def _table(self, dtype: torch.dtype) -> list[tuple[str, float]]:
        key = (self.name, self.values, dtype)
        table = _TABLES.get(key)
        if table is None:
            table = _TABLES[key] = [(f"{self.name}:{v}", special_value(v, dtype)) for v in self.values]
        return table

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        plain = _plain_candidates(sample)
        if plain is not None:  # every draw in one call (Note [Mutation cost]): value, argument, count, positions
            candidates, n = plain
            draws = _fill_draws(len(self.values), len(candidates), n, gen)
            value_name, index = self.values[draws[0]], candidates[draws[1]]
            return _filled(sample, index, _shuffled_first(n, draws[3:], 1 + draws[2]),
                           special_value(value_name, sample.args[index].dtype), f"{self.name}:{value_name}")
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
    burst: int = BURST  # Note [Mutation bursts]

    def mutate_burst(self, sample: Sample, gen: torch.Generator) -> list[Sample] | None:
        return _filled_burst(sample, gen, self.burst, self._table)

    def _table(self, dtype: torch.dtype) -> list[tuple[str, float]]:
        key = (self.name, (), dtype)
        table = _TABLES.get(key)
        if table is None:
            table = _TABLES[key] = [(self.name, v) for v in boundary_table(dtype)]
        return table

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        plain = _plain_candidates(sample)
        if plain is not None:
            candidates, n = plain
            args = sample.args
            size = len(boundary_table(args[candidates[0]].dtype))
            if all([len(boundary_table(args[i].dtype)) == size for i in candidates[1:]]):
                # every draw in one call (Note [Mutation cost]): argument, value, count, positions
                draws = _fill_draws(len(candidates), size, n, gen)
                index = candidates[draws[0]]
                value = boundary_table(args[index].dtype)[draws[1]]
                return _filled(sample, index, _shuffled_first(n, draws[3:], 1 + draws[2]), value, self.name)

        def edit(t: torch.Tensor, g: torch.Generator) -> torch.Tensor:
            values = boundary_values(t.dtype)
            out = t.contiguous().clone()
            value = values[randbelow(len(values), g)]  # drawn before the positions, as `flat[positions] = value` did
            out.view(-1).index_fill_(0, _positions(out, g), value)
            return out

        return _edit_one(sample, gen, edit, self.name)


@dataclass
class LargeOffset:
    """One offset shared by every element of a tensor: a large mean over the tensor's own small spread.

    Formulas that square before they subtract the mean (a variance as E[x^2] - E[x]^2) overflow there while the
    true result is small, and differences of nearly equal values cancel: the input a report about "a large offset"
    describes. The offsets are the special values `square_overflow` (twice sqrt(max): a square overflows) and
    `beyond_2_24` (integers stop being exact), either sign. One whole-tensor add (Note [Mutation cost]); the
    shape, dtype and strides stay, so a compiled mode runs it without recompiling."""

    name: str = "offset"
    weight: float = 1.0
    offsets: tuple[str, ...] = ("square_overflow", "beyond_2_24")

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        args = sample.args
        if not sample.kwargs and all([type(a) is torch.Tensor for a in args]):
            # Plain tensor arguments: the offset and the argument (as _edit_one picks it) drawn in one call
            # (randbelow_pair: the same draws; Note [Mutation cost]).
            candidates = [i for i, t in enumerate(args) if t.is_floating_point() and t.numel() > 0]
            if not candidates:
                return None
            both = randbelow_pair(2 * len(self.offsets), len(candidates), gen)
            draw, pick = both if both is not None else (randbelow(2 * len(self.offsets), gen),
                                                        randbelow(len(candidates), gen))
            offset_name, negative = self.offsets[draw // 2], bool(draw % 2)
            chosen = candidates[pick]
            new = list(args)
            new[chosen] = self._edit(args[chosen], offset_name, negative)
            return Sample(tuple(new), {}, sample.ctor, f"{sample.origin}>{self._label(offset_name, negative)}")
        draw = randbelow(2 * len(self.offsets), gen)
        offset_name, negative = self.offsets[draw // 2], bool(draw % 2)
        return _edit_one(sample, gen, lambda t, g: self._edit(t, offset_name, negative),
                         self._label(offset_name, negative))

    def _label(self, offset_name: str, negative: bool) -> str:
        return f"{self.name}:{'-' if negative else ''}{offset_name}"

    @staticmethod
    def _edit(t: torch.Tensor, offset_name: str, negative: bool) -> torch.Tensor:
        offset = special_value(offset_name, t.dtype) * (-1.0 if negative else 1.0)
        if t.dtype is torch.float32 or t.dtype is torch.float64:
            return t + _factor(offset, t.dtype)
        return (t.double() + offset).to(t.dtype)


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
        both = randbelow_pair(len(shape), 2, gen)  # the two draws in one call (Note [Mutation cost])
        dim, up = both if both is not None else (randbelow(len(shape), gen), randbelow(2, gen))
        grow = bool(up) or shape[dim] <= 1

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
DEFAULT_MUTATORS = (GaussianNoise(), SpecialValues(), DtypeBoundary(), LargeOffset(), LayoutChange(),
                    SmallShapeChange(), *_trigger_mutators())
