"""Trigger-aware structural mutators: zero-size dims, overlapping (stride-0) views, memory formats and
broadcasting — the input shapes behind many real layout and shape bugs (false_alarms.md: aliasing and
strides, channels_last, compilers losing strides). Value triggers (NaN/±inf/±0, subnormals, magnitudes
beyond sqrt(max) and 2^24) are SpecialValues names (mutators/values.py)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from fuzz_core.inputs import Sample
from fuzz_core.mutators.base import randbelow
from fuzz_core.tensors import map_tensors, tensor_leaves


def _first_shape(sample: Sample) -> torch.Size | None:
    leaves = tensor_leaves(sample.tree())
    return leaves[0].shape if leaves and leaves[0].dim() > 0 else None


def _pick(gen: torch.Generator, n: int) -> int:
    return randbelow(n, gen)


@dataclass
class ZeroSizeDim:
    """One dimension of every tensor shaped like the first becomes 0 (empty inputs)."""

    name: str = "zero_size"
    weight: float = 0.5

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        shape = _first_shape(sample)
        if shape is None or 0 in shape:
            return None
        dim = _pick(gen, len(shape))
        return sample.with_tree(map_tensors(sample.tree(), lambda t: t.narrow(dim, 0, 0).clone()
                                            if t.shape == shape else t), origin=f"{sample.origin}>zero_size")


@dataclass
class OverlappingView:
    """The first tensor becomes a stride-0 view repeating one slice (memory overlaps itself)."""

    name: str = "overlap"
    weight: float = 0.5

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        shape = _first_shape(sample)
        if shape is None or max(shape) < 2:
            dims = []
        else:
            dims = [d for d, size in enumerate(shape) if size > 1]
        if not dims:
            return None
        dim = dims[_pick(gen, len(dims))]
        done = [False]

        def overlap(t: torch.Tensor) -> torch.Tensor:
            if done[0] or t.shape != shape:
                return t
            done[0] = True
            return t.narrow(dim, 0, 1).clone().expand(shape)

        return sample.with_tree(map_tensors(sample.tree(), overlap), origin=f"{sample.origin}>overlap")


def _other_memory_format(t: torch.Tensor) -> torch.Tensor:
    if t.dim() == 4:
        return t.contiguous(memory_format=torch.channels_last)
    if t.dim() == 5:
        return t.contiguous(memory_format=torch.channels_last_3d)
    return t.transpose(-1, -2).contiguous().transpose(-1, -2)  # column-major: the 2-D analogue


@dataclass
class MemoryFormat:
    """Same values, other memory order: channels_last (4-D), channels_last_3d (5-D), column-major (2-D/3-D)."""

    name: str = "memory_format"
    weight: float = 0.5

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        if not any(t.dim() >= 2 and t.numel() > 1 for t in tensor_leaves(sample.tree())):
            return None
        return sample.with_tree(map_tensors(sample.tree(), lambda t: _other_memory_format(t)
                                            if t.dim() >= 2 and t.numel() > 1 else t),
                                origin=f"{sample.origin}>memory_format")


@dataclass
class Broadcast:
    """A later tensor argument shaped like the first shrinks to size 1 along one dimension (broadcasting)."""

    name: str = "broadcast"
    weight: float = 0.5

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None:
        leaves = tensor_leaves(sample.tree())
        shape = _first_shape(sample)
        if shape is None or not any(t.shape == shape for t in leaves[1:]):
            return None
        dims = [d for d, size in enumerate(shape) if size > 1]
        if not dims:
            return None
        dim = dims[_pick(gen, len(dims))]
        seen = [0]

        def shrink(t: torch.Tensor) -> torch.Tensor:
            seen[0] += 1
            if seen[0] == 1 or t.shape != shape:
                return t
            return t.narrow(dim, 0, 1).clone()

        return sample.with_tree(map_tensors(sample.tree(), shrink), origin=f"{sample.origin}>broadcast")
