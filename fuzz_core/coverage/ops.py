"""Op-level coverage: the set of (ATen op, dtype, layout) an execution reaches."""

from __future__ import annotations

from dataclasses import dataclass, field

from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

import torch

OpKey = tuple[str, str, str]


@dataclass
class OpCoverage(TorchDispatchMode):
    """Accumulates (op, dtype, layout) triples across every block it wraps.

    The dtype and layout are those of the op's first tensor output (or first tensor input for
    ops that return none), which is what distinguishes one kernel choice from another.
    """

    seen: set[OpKey] = field(default_factory=set)
    last: set[OpKey] = field(default_factory=set)

    def __post_init__(self) -> None:
        super().__init__()

    def __enter__(self) -> OpCoverage:
        self.last = set()
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        leaves, _ = tree_flatten(out)
        tensors = [x for x in leaves if isinstance(x, torch.Tensor)]
        if not tensors:
            in_leaves, _ = tree_flatten((args, kwargs))
            tensors = [x for x in in_leaves if isinstance(x, torch.Tensor)]
        if tensors:
            t = tensors[0]
            key = (str(func), str(t.dtype).removeprefix("torch."), str(t.layout).removeprefix("torch."))
        else:
            key = (str(func), "-", "-")
        self.last.add(key)
        self.seen.add(key)
        return out

    def new_in_last(self, before: set[OpKey]) -> set[OpKey]:
        """Triples the last block reached that `before` did not hold."""
        return self.last - before
