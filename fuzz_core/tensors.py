"""Helpers over nested (args, kwargs) structures whose leaves may be tensors."""

from __future__ import annotations

from typing import Any, Callable

import torch

LOW_PRECISION = (torch.float16, torch.bfloat16)


# Plain recursion over tuple/list/dict: the hot loop calls these several times per execution and
# torch's general pytree costs several times more for the small structures of op calls. Plain tuples, lists,
# dicts and tensors are recognised by exact type first, and tensor leaves are mapped without a further call
# (Note [The hot loop] in fuzz_core/campaign.py); subclasses (namedtuples, Parameters) take the general path.
def map_tensors(obj: Any, fn: Callable[[torch.Tensor], Any]) -> Any:
    kind = type(obj)
    if kind is tuple:
        return tuple([fn(v) if type(v) is _Tensor else map_tensors(v, fn) for v in obj])
    if kind is dict:
        return {k: fn(v) if type(v) is _Tensor else map_tensors(v, fn) for k, v in obj.items()}
    if kind is list:
        return [fn(v) if type(v) is _Tensor else map_tensors(v, fn) for v in obj]
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, tuple):
        mapped = [map_tensors(v, fn) for v in obj]
        return type(obj)(*mapped) if hasattr(obj, "_fields") else tuple(mapped)
    if isinstance(obj, list):
        return [map_tensors(v, fn) for v in obj]
    if isinstance(obj, dict):
        return {k: map_tensors(v, fn) for k, v in obj.items()}
    return obj


_Tensor = torch.Tensor


# Leaves that hold no tensor, skipped without a call.
_ATOMS = frozenset({int, float, bool, str, complex, type(None), torch.dtype})


def _collect(obj: Any, out: list[torch.Tensor]) -> None:
    kind = type(obj)
    if kind is _Tensor:
        out.append(obj)
    elif kind is tuple or kind is list:
        for v in obj:
            k = type(v)
            if k is _Tensor:
                out.append(v)
            elif k not in _ATOMS and not (k is dict and not v):  # an empty kwargs dict: nothing
                _collect(v, out)
    elif kind is dict:
        for v in obj.values():
            _collect(v, out)
    elif isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for v in obj:
            _collect(v, out)
    elif isinstance(obj, dict):
        for v in obj.values():
            _collect(v, out)


def tensor_leaves(obj: Any) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []
    _collect(obj, out)
    return out


def replace_leaf(obj: Any, index: int, new: torch.Tensor) -> Any:
    """`obj` with its `index`-th tensor leaf (tensor_leaves order) replaced by `new`; the other leaves kept."""
    seen = [-1]

    def swap(t: torch.Tensor) -> torch.Tensor:
        seen[0] += 1
        return new if seen[0] == index else t

    return map_tensors(obj, swap)


def _detached_clone(t: torch.Tensor) -> torch.Tensor:
    return t.detach().clone() if t.requires_grad else t.clone()  # no graph to cut: the same copy, one call


def clone_tree(obj: Any) -> Any:
    return map_tensors(obj, _detached_clone)


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
    if isinstance(obj, torch.Tensor):
        shape = tuple(obj.shape) if with_shapes else obj.dim()
        return f"T({obj.dtype},{shape})"
    if isinstance(obj, (tuple, list)):
        inner = ",".join(structure_key(v, with_shapes=with_shapes) for v in obj)
        return f"{type(obj).__name__}({inner})"
    if isinstance(obj, dict):
        return "{" + ",".join(f"{k!r}:{structure_key(v, with_shapes=with_shapes)}" for k, v in obj.items()) + "}"
    return repr(obj)


def structure_sig(obj: Any) -> Any:
    """structure_key(obj, with_shapes=True) as a hashable tuple, several times cheaper to build: tensor leaves as
    (dtype, shape), containers tagged with their type, every other value by its repr (Note [The hot loop])."""
    kind = type(obj)
    if kind is tuple or kind is list:
        return (kind, *[(v.dtype, v.shape) if type(v) is _Tensor else structure_sig(v) for v in obj])
    if kind is dict:
        return (dict, *[(repr(k), structure_sig(v)) for k, v in obj.items()])
    if isinstance(obj, torch.Tensor):
        return (obj.dtype, obj.shape)
    if isinstance(obj, (tuple, list)):
        return (type(obj), *[structure_sig(v) for v in obj])
    if isinstance(obj, dict):
        return (dict, *[(repr(k), structure_sig(v)) for k, v in obj.items()])
    return repr(obj)


class _Slot:
    """Placeholder for the i-th tensor in a structure template."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def _fill(template: Any, tensors: Any) -> Any:
    if isinstance(template, _Slot):
        return tensors[template.index]
    if isinstance(template, tuple):
        filled = [_fill(v, tensors) for v in template]
        return type(template)(*filled) if hasattr(template, "_fields") else tuple(filled)
    if isinstance(template, list):
        return [_fill(v, tensors) for v in template]
    if isinstance(template, dict):
        return {k: _fill(v, tensors) for k, v in template.items()}
    return template


def split_tensors(obj: Any) -> tuple[list[torch.Tensor], Callable[[list[torch.Tensor]], Any]]:
    """Tensor leaves of `obj`, and a function that rebuilds `obj` with other tensors in their place.

    The rebuild template holds index placeholders, never the original tensors: a compiled wrapper
    that closes over the first call's input tensors lets dynamo alias later inputs to them (see
    Note [Stale closure tensors] in fuzz_core/modes/compile.py).
    """
    tensors: list[torch.Tensor] = []

    def to_slot(t: torch.Tensor) -> _Slot:
        tensors.append(t)
        return _Slot(len(tensors) - 1)

    template = map_tensors(obj, to_slot)

    def rebuild(new: list[torch.Tensor]) -> Any:
        return _fill(template, new)

    return tensors, rebuild


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


def structure_dims_sig(obj: Any) -> Any:
    """structure_key(obj, with_shapes=False) as a hashable tuple, as structure_sig is structure_key(obj,
    with_shapes=True): tensor leaves as (dtype, number of dimensions). The compiled modes' cache key, per call."""
    kind = type(obj)
    if kind is tuple or kind is list:
        return (kind, *[(v.dtype, v.dim()) if type(v) is _Tensor else structure_dims_sig(v) for v in obj])
    if kind is dict:
        return (dict, *[(repr(k), structure_dims_sig(v)) for k, v in obj.items()])
    if isinstance(obj, torch.Tensor):
        return (obj.dtype, obj.dim())
    if isinstance(obj, (tuple, list)):
        return (type(obj), *[structure_dims_sig(v) for v in obj])
    if isinstance(obj, dict):
        return (dict, *[(repr(k), structure_dims_sig(v)) for k, v in obj.items()])
    return repr(obj)
