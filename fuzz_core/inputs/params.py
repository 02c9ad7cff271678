"""Place a trigger's parameter values into a call: the positional slot the sample already uses,
a keyword otherwise, and for nn.Module classes the constructor when the parameter is one of its.

OpInfo samples pass many parameters positionally (`cumsum(t, 0)`); adding `dim=` as a keyword
on top would call `cumsum(t, 0, dim=...)` and only ever test a TypeError.
"""

from __future__ import annotations

import inspect
from functools import lru_cache
from typing import Any

import torch

from fuzz_core.inputs import Sample
from fuzz_core.target import Target


@lru_cache(maxsize=4096)
def _schema_positions(op_name: str) -> tuple[tuple[str, ...], ...]:
    """Positional parameter names of every ATen overload called `op_name`."""
    try:
        schemas = torch._C._jit_get_schemas_for_operator(f"aten::{op_name}")
    except Exception:
        return ()
    return tuple(tuple(a.name for a in s.arguments if not a.kwarg_only) for s in schemas)


def positional_names(fn: Any, short_name: str) -> tuple[str, ...] | None:
    """Names of fn's positional parameters in order, from its signature or its ATen schema."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        params = None
    if params is not None:
        return tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    overloads = _schema_positions(short_name.rstrip("_"))
    if not overloads:
        return None
    return max(overloads, key=len)


def _ctor_names(cls: type) -> set[str]:
    try:
        return set(inspect.signature(cls.__init__).parameters) - {"self"}
    except (TypeError, ValueError):
        return set()


def place_params(sample: Sample, params: dict[str, Any], target: Target | None) -> Sample:
    if target is None:
        return Sample(sample.args, {**sample.kwargs, **params}, sample.ctor, f"{sample.origin}+params")
    args, kwargs = list(sample.args), dict(sample.kwargs)
    ctor = dict(sample.ctor) if sample.ctor is not None else None
    if target.is_module_class:
        ctor_names = _ctor_names(target.fn)
        for name, value in params.items():
            if name in ctor_names:
                ctor = {**(ctor or {}), name: value}
            else:
                kwargs[name] = value
        return Sample(tuple(args), kwargs, ctor, f"{sample.origin}+params")
    names = positional_names(target.fn, target.short_name) or ()
    for name, value in params.items():
        # Tensor methods take `self` first; a schema lists it, a bound method's signature does not.
        index = names.index(name) if name in names else None
        if index is not None and index < len(args):
            args[index] = value
            kwargs.pop(name, None)
        else:
            kwargs[name] = value
    return Sample(tuple(args), kwargs, ctor, f"{sample.origin}+params")
