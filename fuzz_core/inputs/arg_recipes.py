"""Argument recipes: typed, literal descriptions of one argument that a seeded builder turns into a value.

The per-op rule table (fuzz_core.inputs.arg_rules) writes calls as recipes, never as code: `Rand((2, 3, 8))`
is a tensor of the harness dtype, `Quant((3, 4), torch.qint8, axis=0)` a per-channel quantized tensor,
`Derived("max_pool", (2, 3, 8), "indices")` the indices a max pool returned for a seeded input, so an
unpool gets positions that exist. Any other value (int, float, list, dtype, string) is used as is.
Derivations are the fixed functions in DERIVATIONS below; a rule only names one.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable

import torch


@dataclass(frozen=True)
class Rand:
    """A floating tensor in the harness dtype (or `dtype`); domain: normal, unit [0,1), positive, log_probs, tanh."""

    shape: tuple[int, ...]
    domain: str = "normal"
    dtype: torch.dtype | None = None
    layout: str = "strided"  # or "mkldnn"


@dataclass(frozen=True)
class Ints:
    """An integer tensor with values in [low, high)."""

    shape: tuple[int, ...]
    low: int
    high: int
    dtype: torch.dtype = torch.int64


@dataclass(frozen=True)
class Exact:
    """A tensor of exactly these values (lengths, CSR row pointers, ±1 targets)."""

    values: tuple[Any, ...]
    dtype: torch.dtype = torch.int64


@dataclass(frozen=True)
class Quant:
    """A quantized tensor: per-tensor (scale 0.1) or, with `axis`, per-channel (scales 0.1, 0.2, ...)."""

    shape: tuple[int, ...]
    qdtype: torch.dtype = torch.quint8
    axis: int | None = None


@dataclass(frozen=True)
class SparseCoo:
    """A coalesced COO tensor of the harness dtype with about half its entries zero."""

    shape: tuple[int, ...]


@dataclass(frozen=True)
class Nested:
    """A nested (jagged) tensor of the harness dtype with components of these shapes."""

    shapes: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Seq:
    """A list of values (an RNN's hx pair, its flat weights)."""

    items: tuple[Any, ...]


@dataclass(frozen=True)
class Derived:
    """Part `part` of what the named derivation returns for a seeded input of `shape` (shared within a call)."""

    derivation: str
    shape: tuple[int, ...]
    part: int = 0


def _max_pool(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    pool = {3: torch.nn.functional.max_pool1d, 4: torch.nn.functional.max_pool2d,
            5: torch.nn.functional.max_pool3d}[x.dim()]
    return pool(x, 2, return_indices=True)


# Name -> function of one seeded float tensor; the tuple's parts are what recipes pick.
DERIVATIONS: dict[str, Callable[[torch.Tensor], tuple[Any, ...]]] = {
    "max_pool": _max_pool,  # (values, indices) of a kernel-2 max pool with return_indices=True
}


class RecipeBuilder:
    """Materialises recipes for one call from one generator, so a seed always builds the same call."""

    def __init__(self, dtype: torch.dtype, seed: int) -> None:
        self.dtype = dtype if dtype.is_floating_point else torch.float32
        self.gen = torch.Generator().manual_seed(seed)
        self.seed = seed
        self.derived: dict[tuple[str, tuple[int, ...]], tuple[Any, ...]] = {}

    def floats(self, shape: tuple[int, ...], domain: str = "normal", dtype: torch.dtype | None = None) -> torch.Tensor:
        if domain in ("unit", "positive"):
            made = torch.rand(shape, generator=self.gen) + (0.5 if domain == "positive" else 0.0)
        else:
            made = torch.randn(shape, generator=self.gen)
            if domain == "log_probs":
                made = made.log_softmax(-1)
            elif domain == "tanh":
                made = made.tanh()
        return made.to(dtype or self.dtype)

    def build(self, recipe: Any) -> Any:
        if isinstance(recipe, Rand):
            made = self.floats(recipe.shape, recipe.domain, recipe.dtype)
            return made.to_mkldnn() if recipe.layout == "mkldnn" else made
        if isinstance(recipe, Ints):
            return torch.randint(recipe.low, recipe.high, recipe.shape, generator=self.gen).to(recipe.dtype)
        if isinstance(recipe, Exact):
            return torch.tensor(recipe.values, dtype=recipe.dtype)
        if isinstance(recipe, Quant):
            return self.quantized(recipe)
        if isinstance(recipe, SparseCoo):
            return self.floats(recipe.shape).relu().to_sparse().coalesce()
        if isinstance(recipe, Nested):
            return torch.nested.nested_tensor([self.floats(s) for s in recipe.shapes], layout=torch.jagged)
        if isinstance(recipe, Seq):
            return [self.build(item) for item in recipe.items]
        if isinstance(recipe, Derived):
            key = (recipe.derivation, recipe.shape)
            if key not in self.derived:
                self.derived[key] = DERIVATIONS[recipe.derivation](self.floats(recipe.shape))
            return self.derived[key][recipe.part]
        return copy.deepcopy(recipe)  # a literal: lists are copied so an in-place op cannot edit the table

    def quantized(self, recipe: Quant) -> torch.Tensor:
        x = self.floats(recipe.shape, dtype=torch.float32)
        zero_point = 10 if recipe.qdtype == torch.quint8 else 0
        if recipe.axis is None:
            return torch.quantize_per_tensor(x, 0.1, zero_point, recipe.qdtype)
        channels = recipe.shape[recipe.axis]
        scales = torch.tensor([0.1 * (i + 1) for i in range(channels)], dtype=torch.float64)
        zero_points = torch.full((channels,), zero_point, dtype=torch.int64)
        return torch.quantize_per_channel(x, scales, zero_points, recipe.axis, recipe.qdtype)
