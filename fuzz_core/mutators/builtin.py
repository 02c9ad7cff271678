"""Built-in mutators: gaussian noise, special values, dtype boundaries, layout change, small shape change."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.layout import noncontiguous_copy
from fuzz_core.mutators.values import SPECIAL_VALUE_NAMES, boundary_values, special_value
from fuzz_core.tensors import map_tensors, tensor_leaves


def _float_leaf_indices(sample: Sample) -> list[int]:
    return [i for i, t in enumerate(tensor_leaves(sample.tree())) if t.is_floating_point() and t.numel() > 0]


def _edit_one(sample: Sample, gen: torch.Generator, edit, label: str) -> Sample | None:  # type: ignore[no-untyped-def]
    """Apply `edit(tensor, gen)` to one randomly chosen floating tensor leaf."""
    candidates = _float_leaf_indices(sample)
    if not candidates:
        return None
    chosen = candidates[int(torch.randint(0, len(candidates), (1,), generator=gen))]
    counter = iter(range(10**9))

    def maybe_edit(t: torch.Tensor) -> torch.Tensor:
        return edit(t, gen) if next(counter) == chosen else t

    return sample.with_tree(map_tensors(sample.tree(), maybe_edit), origin=f"{sample.origin}>{label}")


def _positions(t: torch.Tensor, gen: torch.Generator, most: int = 3) -> torch.Tensor:
    count = 1 + int(torch.randint(0, most, (1,), generator=gen))
    return torch.randperm(t.numel(), generator=gen)[:count]


@dataclass
class GaussianNoise:
    name: str = "gaussian"
    scale: float = 0.1
    weight: float = 4.0

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        def edit(t: torch.Tensor, g: torch.Generator) -> torch.Tensor:
            spread = float(t.float().abs().mean()) if t.numel() else 1.0
            spread = spread if spread > 0 and spread == spread and spread != float("inf") else 1.0
            noise = torch.randn(t.shape, generator=g) * (self.scale * spread)
            return (t.double() + noise.double()).to(t.dtype)

        return _edit_one(sample, gen, edit, self.name)


@dataclass
class SpecialValues:
    name: str = "special"
    weight: float = 3.0
    values: tuple[str, ...] = SPECIAL_VALUE_NAMES

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        value_name = self.values[int(torch.randint(0, len(self.values), (1,), generator=gen))]

        def edit(t: torch.Tensor, g: torch.Generator) -> torch.Tensor:
            out = t.contiguous().clone()
            out.view(-1)[_positions(out, g)] = special_value(value_name, t.dtype)
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
            out.view(-1)[_positions(out, g)] = values[int(torch.randint(0, len(values), (1,), generator=g))]
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
        dim = int(torch.randint(0, len(shape), (1,), generator=gen))
        grow = bool(torch.randint(0, 2, (1,), generator=gen)) or shape[dim] <= 1

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
