"""List the public PyTorch API: OpInfo ops, torch.* and F.* functions, Tensor methods, nn modules."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import lru_cache

API_KINDS = ("opinfo", "function", "method", "module")


@dataclass(frozen=True)
class ApiEntry:
    api: str  # qualified name, e.g. torch.nn.functional.relu6, torch.Tensor.add_, torch.nn.Conv2d
    kind: str  # one of API_KINDS
    in_opinfo: bool


@lru_cache(maxsize=1)
def opinfo_api_names() -> frozenset[str]:
    """Qualified names of the ops PyTorch's OpInfo database covers (imports it: several seconds)."""
    from torch.testing._internal.common_methods_invocations import op_db

    names = set()
    for op in op_db:
        if op.name.startswith(("_", "torch.ops")):
            continue
        names.add("torch." + op.name)
    return frozenset(names)


def _public(names: list[str]) -> list[str]:
    return sorted(n for n in names if not n.startswith("_"))


def enumerate_api(*, include_opinfo: bool = True) -> list[ApiEntry]:
    """Every public callable we can fuzz, once each, OpInfo-covered names marked.

    Only names fuzz_core's API rule accepts are listed (fuzz_core.api_names): loaders, settings and
    anything outside torch's public namespace never become transfer targets.
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    from fuzz_core.api_names import is_public_api

    opinfo = opinfo_api_names() if include_opinfo else frozenset()
    entries: dict[str, ApiEntry] = {}

    def add(api: str, kind: str) -> None:
        if api not in entries and is_public_api(api):
            entries[api] = ApiEntry(api=api, kind="opinfo" if api in opinfo else kind, in_opinfo=api in opinfo)

    for name in sorted(opinfo):
        add(name, "opinfo")
    for name in _public(dir(torch)):
        obj = getattr(torch, name, None)
        if callable(obj) and not inspect.isclass(obj) and not inspect.ismodule(obj):
            add(f"torch.{name}", "function")
    for name in _public(dir(F)):
        obj = getattr(F, name, None)
        if callable(obj) and not inspect.isclass(obj) and getattr(obj, "__module__", "").startswith("torch"):
            add(f"torch.nn.functional.{name}", "function")
    for name in _public(dir(torch.Tensor)):
        if callable(getattr(torch.Tensor, name, None)):
            add(f"torch.Tensor.{name}", "method")
    for name in _public(dir(nn)):
        obj = getattr(nn, name, None)
        if inspect.isclass(obj) and issubclass(obj, nn.Module) and obj is not nn.Module:
            add(f"torch.nn.{name}", "module")
    return sorted(entries.values(), key=lambda e: e.api)
