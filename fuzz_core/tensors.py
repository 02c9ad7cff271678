"""Helpers over nested (args, kwargs) structures whose leaves may be tensors."""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch.utils import _pytree as pytree

LOW_PRECISION = (torch.float16, torch.bfloat16)


def map_tensors(obj: Any, fn: Callable[[torch.Tensor], Any]) -> Any:
    return pytree.tree_map(lambda leaf: fn(leaf) if isinstance(leaf, torch.Tensor) else leaf, obj)


def tensor_leaves(obj: Any) -> list[torch.Tensor]:
    return [leaf for leaf in pytree.tree_leaves(obj) if isinstance(leaf, torch.Tensor)]


def clone_tree(obj: Any) -> Any:
    return map_tensors(obj, lambda t: t.detach().clone())


def cast_floating(obj: Any, dtype: torch.dtype) -> Any:
    """Floating tensors to `dtype` (complex to its matching complex dtype); others unchanged."""
    complex_dtype = {torch.float64: torch.complex128, torch.float32: torch.complex64}.get(dtype)

    def cast(t: torch.Tensor) -> torch.Tensor:
        if t.is_floating_point():
            return t.detach().to(dtype)
        if t.is_complex() and complex_dtype is not None:
            return t.detach().to(complex_dtype)
        return t

    return map_tensors(obj, cast)


def structure_key(obj: Any, *, with_shapes: bool) -> str:
    """A hashable description of a structure: tensor dtypes (and shapes) plus every non-tensor value."""
    leaves, spec = pytree.tree_flatten(obj)
    parts = []
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            shape = tuple(leaf.shape) if with_shapes else leaf.dim()
            parts.append(f"T({leaf.dtype},{shape})")
        else:
            parts.append(repr(leaf))
    return f"{spec}|{'|'.join(parts)}"


def split_tensors(obj: Any) -> tuple[list[torch.Tensor], Callable[[list[torch.Tensor]], Any]]:
    """Tensor leaves of `obj`, and a function that rebuilds `obj` with other tensors in their place."""
    leaves, spec = pytree.tree_flatten(obj)
    positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]

    def rebuild(tensors: list[torch.Tensor]) -> Any:
        new = list(leaves)
        for pos, t in zip(positions, tensors):
            new[pos] = t
        return pytree.tree_unflatten(new, spec)

    return [leaves[i] for i in positions], rebuild


def output_leaves(out: Any) -> list[tuple[str, Any]]:
    """(path, leaf) pairs of an op's output; namedtuple fields keep their names (e.g. 'indices')."""
    result: list[tuple[str, Any]] = []

    def walk(obj: Any, path: str) -> None:
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            for name, value in zip(obj._fields, obj):
                walk(value, f"{path}.{name}" if path else name)
        elif isinstance(obj, (list, tuple)):
            for i, value in enumerate(obj):
                walk(value, f"{path}[{i}]")
        elif isinstance(obj, dict):
            for key in sorted(obj, key=str):
                walk(obj[key], f"{path}[{key!r}]")
        else:
            result.append((path or "out", obj))

    walk(out, "")
    return result


def numel_total(obj: Any) -> int:
    return sum(t.numel() for t in tensor_leaves(obj))
