"""The fuzzing corpus: inputs kept because their coverage was new, with their ancestry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from fuzz_core.coverage.ann import AnnCoverage


@dataclass
class CorpusElement:
    data: torch.Tensor  # one input, without the batch dimension
    coverage: np.ndarray
    parent: CorpusElement | None = None
    metadata: dict = field(default_factory=dict)

    def oldest_ancestor(self) -> tuple[CorpusElement, int]:
        """The seed this element descends from, and how many generations separate them."""
        node, generations = self, 0
        while node.parent is not None:
            node, generations = node.parent, generations + 1
        return node, generations


Sampler = Callable[[list[CorpusElement], "np.random.Generator"], CorpusElement]


@dataclass
class Corpus:
    """Elements plus the novelty index deciding who joins."""

    coverage: AnnCoverage
    elements: list[CorpusElement] = field(default_factory=list)
    offered: int = 0

    def add_seed(self, element: CorpusElement) -> None:
        # Seeds join unconditionally, as in TensorFuzz: they are where the search starts.
        self.coverage.add(element.coverage)
        self.elements.append(element)

    def maybe_add(self, element: CorpusElement) -> bool:
        self.offered += 1
        if self.coverage.maybe_add(element.coverage):
            self.elements.append(element)
            return True
        return False

    def __len__(self) -> int:
        return len(self.elements)
