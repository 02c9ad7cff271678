"""Mutator plugins and the corpus-selection seam (a later issue adds coverage guidance there)."""

from __future__ import annotations

from fuzz_core.mutators.base import CorpusEntry, CorpusSelector, Mutator, UniformSelector
from fuzz_core.mutators.builtin import (
    DEFAULT_MUTATORS,
    DtypeBoundary,
    GaussianNoise,
    LargeOffset,
    LayoutChange,
    SmallShapeChange,
    SpecialValues,
)

_REGISTRY: dict[str, Mutator] = {m.name: m for m in DEFAULT_MUTATORS}


def register_mutator(mutator: Mutator) -> None:
    _REGISTRY[mutator.name] = mutator


def get_mutator(name: str) -> Mutator:
    return _REGISTRY[name]


def list_mutators() -> list[str]:
    return list(_REGISTRY)


__all__ = [
    "CorpusEntry", "CorpusSelector", "Mutator", "UniformSelector", "GaussianNoise", "SpecialValues",
    "DtypeBoundary", "LargeOffset", "LayoutChange", "SmallShapeChange", "DEFAULT_MUTATORS", "register_mutator",
    "get_mutator", "list_mutators",
]
