"""Which corpus element to mutate next: uniform, or biased toward recent additions."""

from __future__ import annotations

import numpy as np

from fuzz_core.cgf.corpus import CorpusElement, Sampler


def uniform_sampler(elements: list[CorpusElement], rng: np.random.Generator) -> CorpusElement:
    return elements[int(rng.integers(len(elements)))]


def recent_sampler(elements: list[CorpusElement], rng: np.random.Generator,
                   recent: int = 5) -> CorpusElement:
    """Pick uniformly among the `recent` newest elements plus one element drawn from all.

    Recent additions sit at the frontier of what coverage has reached, so mutating them
    pushes outward; the one uniform draw keeps older regions alive.
    """
    pool = elements[-recent:] + [elements[int(rng.integers(len(elements)))]]
    return pool[int(rng.integers(len(pool)))]


SAMPLERS: dict[str, Sampler] = {"uniform": uniform_sampler, "recent": recent_sampler}


def get_sampler(name: str) -> Sampler:
    if name not in SAMPLERS:
        raise ValueError(f"unknown sampler {name!r}; choose one of {', '.join(SAMPLERS)}")
    return SAMPLERS[name]
