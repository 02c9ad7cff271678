"""Seed inputs materialised from a typed input description (see Note [Described inputs]).

Every random choice comes from one torch.Generator seeded per sample, so the same description
and seed give the same tensors in any worker; mutators then work on them as on any other source.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from fuzz_core.inputs import InputError, Sample
from fuzz_core.inputs.description import ArgumentDescription, InputDescription, TensorDescription
from fuzz_core.modes.layout import channels_last_copy, noncontiguous_copy
from fuzz_core.mutators.values import special_value
from fuzz_core.target import Target

SAMPLES_PER_DESCRIPTION = 4  # same shapes, fresh values: enough seeds for the mutators to start from
DEFAULT_INT_RANGE = (-5, 5)


def described_samples(target: Target, description: InputDescription, dtype: torch.dtype, seed: int,
                      max_samples: int) -> list[Sample]:
    """A few samples of the description; `dtype` fills tensors whose description names none."""
    if description.constructor_kwargs and not target.is_module_class:
        raise InputError(f"constructor kwargs describe an nn.Module, but {target.api} is not a module class")
    return [materialise(description, dtype, seed + i, is_module=target.is_module_class)
            for i in range(max(1, min(max_samples, SAMPLES_PER_DESCRIPTION)))]


def materialise(description: InputDescription, dtype: torch.dtype, seed: int, *, is_module: bool = False) -> Sample:
    gen = torch.Generator().manual_seed(seed)
    args = tuple(_value(a, dtype, gen) for a in description.args)
    kwargs = {name: _value(a, dtype, gen) for name, a in description.kwargs.items()}
    ctor = {name: _value(a, dtype, gen) for name, a in description.constructor_kwargs.items()} if is_module else None
    return Sample(args=args, kwargs=kwargs, ctor=ctor, origin=f"described:{seed}")


def _value(argument: ArgumentDescription, dtype: torch.dtype, gen: torch.Generator) -> Any:
    if argument.tensor is not None:
        return make_tensor(argument.tensor, dtype, gen)
    if argument.kind == "int_list":
        return list(argument.value)  # type: ignore[arg-type]
    return argument.value


def make_tensor(desc: TensorDescription, default_dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    """One tensor as described: values, then special values at seeded positions, then layout."""
    dtype = getattr(torch, desc.dtype) if desc.dtype else default_dtype
    t = _values(desc, dtype, gen)
    if desc.special_values:
        if not dtype.is_floating_point:
            raise InputError(f"special values {list(desc.special_values)} need a floating dtype, not {dtype}")
        flat = t.view(-1)
        positions = torch.randperm(flat.numel(), generator=gen)[: len(desc.special_values)]
        for position, name in zip(positions.tolist(), desc.special_values):
            flat[position] = special_value(name, dtype)
    if desc.layout == "noncontiguous":
        t = noncontiguous_copy(t)
    elif desc.layout == "transposed":
        t = t.transpose(-1, -2).contiguous().transpose(-1, -2)  # same shape and values, column-major strides
    elif desc.layout == "channels_last":
        t = channels_last_copy(t)
    if desc.requires_grad:
        if not (dtype.is_floating_point or dtype.is_complex):
            raise InputError(f"a {dtype} tensor cannot require gradients")
        t.requires_grad_(True)
    return t


def _values(desc: TensorDescription, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    shape = desc.shape
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    if dtype.is_floating_point or dtype.is_complex:
        real = torch.float64
        if desc.low is None and desc.high is None:
            parts = [torch.randn(shape, generator=gen, dtype=real) for _ in range(2 if dtype.is_complex else 1)]
        else:
            low = desc.low if desc.low is not None else desc.high - 1.0  # type: ignore[operator]
            high = desc.high if desc.high is not None else low + 1.0
            parts = [low + (high - low) * torch.rand(shape, generator=gen, dtype=real)
                     for _ in range(2 if dtype.is_complex else 1)]
        values = torch.complex(*parts) if dtype.is_complex else parts[0]
        return values.to(dtype)
    info = torch.iinfo(dtype)
    default_low = max(DEFAULT_INT_RANGE[0], info.min)
    low = max(info.min, math.ceil(desc.low) if desc.low is not None else default_low)
    high = min(info.max, math.floor(desc.high) if desc.high is not None else max(low, DEFAULT_INT_RANGE[1]))
    if high < low:
        raise InputError(f"value range [{desc.low}, {desc.high}] holds no {dtype} value")
    return torch.randint(low, high + 1, shape, generator=gen, dtype=torch.int64).to(dtype)
