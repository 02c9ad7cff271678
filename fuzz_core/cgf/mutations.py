"""Input mutations: TensorFuzz's gaussian and clipped mutations, plus special values."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from fuzz_core.cgf.corpus import CorpusElement


@dataclass(frozen=True)
class InputDomain:
    """Where mutated inputs may go: value bounds and an optional L∞ ball around the seed."""

    a_min: float | None = None
    a_max: float | None = None
    # Radius of the L∞ ball around the element's oldest ancestor (TensorFuzz's
    # perturbation_constraint): the search stays near a real input.
    constraint: float | None = None

    def project(self, batch: torch.Tensor, root: torch.Tensor) -> torch.Tensor:
        """Clip a batch into the ball around `root`, then into the value bounds."""
        if self.constraint is not None:
            delta = (batch - root.unsqueeze(0)).clamp(-self.constraint, self.constraint)
            batch = root.unsqueeze(0) + delta
        if self.a_min is not None or self.a_max is not None:
            batch = batch.clamp(self.a_min, self.a_max)
        return batch


class Mutation(Protocol):
    name: str

    def __call__(self, parent: CorpusElement, count: int, rng: np.random.Generator,
                 domain: InputDomain) -> torch.Tensor:
        """`count` mutants of parent.data, stacked on a new batch dimension."""
        ...


def _noise(rng: np.random.Generator, shape: tuple[int, ...], sigma: float) -> torch.Tensor:
    return torch.from_numpy(rng.normal(0.0, sigma, size=shape))


@dataclass(frozen=True)
class GaussianMutation:
    """Add N(0, sigma²) noise to every entry, then project into the domain (clipped mutation
    when the domain has a constraint). Integer inputs get integer steps of about sigma."""

    sigma: float = 0.2
    name: str = "gaussian"

    def __call__(self, parent: CorpusElement, count: int, rng: np.random.Generator,
                 domain: InputDomain) -> torch.Tensor:
        data = parent.data
        root, _ = parent.oldest_ancestor()
        shape = (count, *data.shape)
        if data.is_floating_point():
            batch = data.to(torch.float64).unsqueeze(0) + _noise(rng, shape, self.sigma)
            out = domain.project(batch, root.data.to(torch.float64))
            return out.to(data.dtype)
        step = max(1, int(round(self.sigma)))
        noise = torch.from_numpy(rng.integers(-step, step + 1, size=shape))
        out = domain.project(data.to(torch.int64).unsqueeze(0) + noise, root.data.to(torch.int64))
        return out.to(data.dtype)


def special_values(dtype: torch.dtype) -> list[float]:
    """NaN, ±Inf, -0.0, a denormal, huge and tiny values for a float dtype.

    The values are the fuzz core's shared special-value table (also used by its triggers and
    its special-value mutator), so a CGF finding and an API-campaign finding mean the same
    thing by "denormal" or "huge".
    """
    from fuzz_core.mutators.values import SPECIAL_VALUE_NAMES, special_value

    return [special_value(name, dtype) for name in SPECIAL_VALUE_NAMES]


@dataclass(frozen=True)
class SpecialValueMutation:
    """Overwrite a few entries with special values (non-finite ones only when allowed).

    Non-finite inputs make a NaN objective trivial, so they are off unless the caller
    asks; the finite specials (denormal, huge, tiny, -0.0) still probe edge behaviour.
    """

    fraction: float = 0.05
    allow_nonfinite: bool = False
    values: Sequence[float] | None = None
    name: str = "special"

    def __call__(self, parent: CorpusElement, count: int, rng: np.random.Generator,
                 domain: InputDomain) -> torch.Tensor:
        data = parent.data
        batch = data.unsqueeze(0).repeat(count, *([1] * data.dim())).clone()
        if not data.is_floating_point() or data.numel() == 0:
            return batch
        pool = list(self.values) if self.values is not None else special_values(data.dtype)
        if not self.allow_nonfinite:
            pool = [v for v in pool if math.isfinite(v)]
        if domain.a_min is not None or domain.a_max is not None:
            lo = -math.inf if domain.a_min is None else domain.a_min
            hi = math.inf if domain.a_max is None else domain.a_max
            pool = [v for v in pool if lo <= v <= hi or math.isnan(v)] or [lo if math.isfinite(lo) else 0.0]
        flat = batch.reshape(count, -1)
        k = max(1, int(round(self.fraction * flat.shape[1])))
        for row in range(count):
            idx = rng.choice(flat.shape[1], size=k, replace=False)
            vals = rng.choice(len(pool), size=k)
            flat[row, torch.from_numpy(idx)] = torch.tensor([pool[v] for v in vals], dtype=flat.dtype)
        return flat.reshape(batch.shape)


@dataclass(frozen=True)
class WeightedMutations:
    """Pick one mutation per batch, with the given weights."""

    mutations: Sequence[Mutation]
    weights: Sequence[float] | None = None
    name: str = "weighted"

    def __call__(self, parent: CorpusElement, count: int, rng: np.random.Generator,
                 domain: InputDomain) -> torch.Tensor:
        w = np.asarray(self.weights if self.weights is not None else [1.0] * len(self.mutations), dtype=float)
        choice = int(rng.choice(len(self.mutations), p=w / w.sum()))
        return self.mutations[choice](parent, count, rng, domain)
