"""Inputs outside what an API defines (DESIGN.md check 5), and gradients through branches that are not taken.

Note [Undefined writes and leaking branches]
- Duplicate indices in a write that does not accumulate (index_copy, index_put/put without accumulate,
  scatter without reduce): which write wins is undefined, so two modes — or autograd and a numerical
  gradient, which sends every source its gradient while only the last write survives — may disagree
  without a bug. At most `suspicious`.
- `torch.where` (and masked_fill) gradients: autograd differentiates both branches and masks afterwards, so a
  NaN/Inf in the branch that is not selected leaks into the gradient (a documented limitation). A NaN/Inf
  analytic gradient where the numerical one is finite, in a composite that selects with where, is at most
  `suspicious`.
"""

from __future__ import annotations

from typing import Any

import torch

from fuzz_core.tensors import tensor_leaves

# Writes where a position named twice keeps one undefined winner (unless the call accumulates or reduces).
OVERWRITING_APIS = frozenset({"index_copy", "index_put", "put", "scatter", "_index_put_impl"})
# ATen ops that select between computed branches: their backward masks, it does not stop, NaN/Inf.
SELECTING_OPS = frozenset({"where", "masked_fill", "_s_where"})


def _dim_argument(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
    return dim if isinstance(dim, int) and not isinstance(dim, bool) else None


def _repeats_along(index: torch.Tensor, dim: int | None) -> bool:
    if index.numel() < 2:
        return False
    if dim is None or index.dim() < 2:
        return int(index.reshape(-1).unique().numel()) < index.numel()
    ordered = index.sort(dim=dim % index.dim()).values
    return bool((ordered.narrow(dim, 1, ordered.shape[dim] - 1) == ordered.narrow(dim, 0, ordered.shape[dim] - 1))
                .any()) if ordered.shape[dim] > 1 else False


def duplicate_write(short_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """Why the call writes one position twice with an undefined winner, or None."""
    name = short_name.rstrip("_")
    if name not in OVERWRITING_APIS or kwargs.get("accumulate") or kwargs.get("reduce") not in (None, ""):
        return None
    dim = _dim_argument(args, kwargs) if name in ("scatter", "index_copy") else None
    for index in tensor_leaves((args, kwargs)):
        if index.dtype in (torch.int64, torch.int32) and _repeats_along(index, dim if name == "scatter" else None):
            return (f"duplicate indices in {short_name} without accumulation: which write wins is undefined, "
                    "so the results (and the gradient of the overwritten sources) may differ without a bug")
    return None


def selects_between_branches(graph: Any) -> bool:
    """The traced composite selects between computed branches (where / masked_fill)."""
    for node in getattr(getattr(graph, "graph", None), "nodes", []):
        name = getattr(node.target, "_opname", None)
        if node.op == "call_function" and name in SELECTING_OPS:
            return True
    return False
