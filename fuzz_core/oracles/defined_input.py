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
- Probability targets outside [0, 1]: cross_entropy's floating target (class probabilities), the targets of
  binary_cross_entropy (with logits too) and kl_div's target (unless log_target) are probabilities by their
  documentation, and nothing checks it. Outside [0, 1] two mathematically equal formulations of the loss (the
  contiguous kernel and the chunked one, eager and compiled code) round differently: linear_cross_entropy with
  targets of 4.7e7 and -1.8e6 differed by 4e-4 relative between contiguous and non-contiguous inputs, while on
  probability targets at the same scale of logits both are within rounding. Maintainers close such inputs as
  out of domain (research/false_alarms.md). At most `suspicious`.
"""

from __future__ import annotations

from typing import Any

import torch

from fuzz_core.tensors import tensor_leaves

# Writes where a position named twice keeps one undefined winner (unless the call accumulates or reduces).
OVERWRITING_APIS = frozenset({"index_copy", "index_put", "put", "scatter", "_index_put_impl"})
# ATen ops that select between computed branches: their backward masks, it does not stop, NaN/Inf.
SELECTING_OPS = frozenset({"where", "masked_fill", "_s_where"})


# API short name (function or module class) -> the position of its probability target among the call's arguments
PROBABILITY_TARGETS: dict[str, int] = {
    "cross_entropy": 1, "CrossEntropyLoss": 1, "linear_cross_entropy": 2,
    "binary_cross_entropy": 1, "BCELoss": 1, "binary_cross_entropy_with_logits": 1, "BCEWithLogitsLoss": 1,
    "kl_div": 1,
}


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


def probability_outside(short_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """Why the call's probability target is out of its domain (a value outside [0, 1]), or None."""
    position = PROBABILITY_TARGETS.get(short_name)
    if position is None or (short_name == "kl_div" and kwargs.get("log_target")):
        return None
    target = kwargs.get("target", args[position] if len(args) > position else None)
    if not isinstance(target, torch.Tensor) or not target.is_floating_point() or not target.numel():
        return None  # class indices, or no target
    outside = (target < 0) | (target > 1)
    if not bool(outside.any()):
        return None
    values = target[outside]
    return (f"{short_name}'s target holds {int(outside.sum())} value(s) outside [0, 1] (from {float(values.min()):.3g} "
            f"to {float(values.max()):.3g}) where the API takes probabilities: an input outside its domain, where "
            "equal formulations of the loss may round differently without a bug")
