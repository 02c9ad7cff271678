"""Detect targets that draw random numbers (their outputs only compare under the same RNG state)."""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from fuzz_core.inputs import Sample
from fuzz_core.modes.base import bound_callable
from fuzz_core.target import Target
from fuzz_core.tensors import clone_tree


class _SeenRandom(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.random = False

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if torch.Tag.nondeterministic_seeded in getattr(func, "tags", ()):
            self.random = True
        return func(*args, **(kwargs or {}))


def uses_rng(target: Target, sample: Sample) -> bool:
    args, kwargs = clone_tree(sample.tree())
    watcher = _SeenRandom()
    try:
        fn = bound_callable(target, sample)
        with torch.no_grad(), watcher:
            fn(*args, **kwargs)
    except Exception:
        return watcher.random
    return watcher.random
