"""Seed inputs from PyTorch's OpInfo database (sample_inputs per device and dtype), imported lazily once."""

from __future__ import annotations

import sys
from functools import lru_cache
from typing import Any

import torch

from fuzz_core.inputs import NoInputs, Sample

_PREFIXES = ("torch.Tensor.", "torch.nn.functional.", "torch.")


def _call_without_reseeding(op: Any, *args: Any, **kwargs: Any) -> Any:
    return op(*args, **kwargs)


@lru_cache(maxsize=1)
def op_db() -> list[Any]:
    # ~6 s import; a worker pays it once and keeps it.
    from torch.testing._internal.common_methods_invocations import op_db as _op_db

    # OpInfo wraps random ops in wrapper_set_seed, which calls torch.manual_seed inside the op: eager
    # then looks deterministic while a traced/compiled graph (which drops that Python call) does not.
    # PyTorch's own inductor OpInfo test replaces it with a plain call; so do we (the campaign reseeds).
    for name, module in list(sys.modules.items()):
        if name.startswith("torch.testing._internal") and hasattr(module, "wrapper_set_seed"):
            module.wrapper_set_seed = _call_without_reseeding
    return list(_op_db)


def opinfo_name(api: str) -> str:
    """`torch.nn.functional.relu6` → `nn.functional.relu6`; `torch.Tensor.add` → `add`."""
    if api.startswith("torch.Tensor."):
        return api[len("torch.Tensor."):]
    if api.startswith("torch."):
        return api[len("torch."):]
    return api


@lru_cache(maxsize=None)
def find_opinfo(api: str) -> Any | None:
    """The OpInfo entry for an API (the default variant, or `name.variant` spelled out), or None."""
    name = opinfo_name(api)
    best = None
    for op in op_db():
        full = f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name
        if full == name:
            return op
        if op.name == name and best is None:
            best = op
        if best is None and any(getattr(alias, "name", None) == name for alias in getattr(op, "aliases", ())):
            best = op
    return best


def opinfo_api_names() -> list[str]:
    """Qualified names of every OpInfo op that resolves in the torch namespace (for sweeps)."""
    names = []
    for op in op_db():
        if op.variant_test_name:
            continue
        for prefix in ("torch.",):
            qualified = prefix + op.name
            obj: Any = torch
            try:
                for part in op.name.split("."):
                    obj = getattr(obj, part)
            except AttributeError:
                continue
            names.append(qualified)
    return sorted(set(names))


def opinfo_samples(api: str, dtype: torch.dtype, max_samples: int) -> list[Sample]:
    op = find_opinfo(api)
    if op is None:
        raise NoInputs(f"no OpInfo entry for {api}")
    if dtype not in op.supported_dtypes("cpu"):
        raise NoInputs(f"OpInfo says {op.name} does not support {dtype} on CPU")
    samples: list[Sample] = []
    torch.manual_seed(0)
    for s in op.sample_inputs("cpu", dtype, requires_grad=False):
        samples.append(Sample(args=(s.input, *s.args), kwargs=dict(s.kwargs), origin=f"opinfo:{op.name}#{len(samples)}"))
        if len(samples) >= max_samples:
            break
    if not samples:
        raise NoInputs(f"OpInfo has no samples for {op.name} in {dtype}")
    return samples


def opinfo_callable(api: str) -> Any | None:
    """OpInfo's function variant, for entries whose name is not a torch attribute."""
    op = find_opinfo(api)
    return None if op is None else op.op
