"""Composite depth: how many rounding steps an op takes once decomposed to core ATen ops.

A composite op run in fp16 rounds after each step, so its ordinary error grows with the number of
steps (F.batch_norm is ~5 half ulps off, rounding only); a single kernel that returns garbage or
overflows is off by orders of magnitude more. The low-precision allowance follows this depth
(oracles/tolerance.py rounding_allowance_ulps).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import torch

from fuzz_core.tensors import split_tensors

# ATen ops (by base name) that move, select or compare data without rounding a value.
_NO_ROUNDING = frozenset((
    "view", "_unsafe_view", "reshape", "expand", "permute", "transpose", "t", "squeeze", "unsqueeze", "clone",
    "copy", "copy_", "alias", "slice", "select", "split", "split_with_sizes", "cat", "stack", "empty",
    "empty_strided", "full", "full_like", "zeros", "zeros_like", "ones", "ones_like", "detach", "as_strided",
    "unbind", "index", "gather", "scatter", "where", "lift_fresh_copy", "_to_copy", "flip", "roll", "narrow",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and", "logical_or", "isnan", "isinf",
    "scalar_tensor", "arange", "contiguous", "neg", "abs", "clamp", "clamp_min", "clamp_max", "maximum",
    "minimum", "amax", "amin", "max", "min", "relu", "sign", "masked_fill", "fill", "constant_pad_nd",
    "convert_element_type", "_assert_tensor_metadata", "_conj", "resolve_conj", "resolve_neg",
))
# Ops that combine many terms: each adds about log2(terms) rounding steps (pairwise summation).
_REDUCTIONS = frozenset(("sum", "mean", "var", "var_mean", "std", "prod", "mm", "bmm", "addmm", "matmul",
                         "dot", "convolution", "norm", "linalg_vector_norm", "cumsum", "logsumexp"))


def _op_name(target: Any) -> str | None:
    """The base name of an ATen op node target (aten.sigmoid.default → sigmoid); None for Python callables."""
    name = getattr(target, "_opname", None)
    return str(name) if name is not None else None


def trace_composite(fn: Callable[..., Any], tree: Any) -> Any:
    """fn(*args, **kwargs) traced to ATen ops with every registered decomposition applied (an fx GraphModule
    taking the tree's tensors in order)."""
    from torch._decomp import decomposition_table
    from torch.fx.experimental.proxy_tensor import make_fx

    tensors, rebuild = split_tensors(tree)

    def call(*ts: torch.Tensor) -> Any:
        args, kwargs = rebuild(list(ts))
        return fn(*args, **kwargs)

    with torch.no_grad():
        return make_fx(call, decomposition_table=decomposition_table, tracing_mode="real")(*tensors)


def composite_depth(graph: Any) -> int:
    """Rounding steps of a traced composite: one per computing op, plus log2 of the reduction length for each
    reduction (a sum of n terms rounds about log2(n) times pairwise)."""
    depth = 0
    for node in graph.graph.nodes:
        if node.op != "call_function":
            continue
        name = _op_name(node.target)
        if name is None or name in _NO_ROUNDING:
            continue
        depth += 1
        if name in _REDUCTIONS:
            value = node.meta.get("val")
            first = node.args[0] if node.args else None
            first_val = first.meta.get("val") if hasattr(first, "meta") else None
            if isinstance(value, torch.Tensor) and isinstance(first_val, torch.Tensor) and value.numel():
                length = max(1, first_val.numel() // max(1, value.numel()))
                depth += int(math.ceil(math.log2(length))) if length > 1 else 0
    return depth


def round_each_step(graph: Any, tree: Any, low: torch.dtype) -> Any:
    """Run a traced composite with every op's floating result rounded to `low`: what an implementation that
    rounds after each step produces (each op itself computed in the traced dtype, as PyTorch's opmath does).
    Its error against float64 is the ordinary rounding error of the composite in `low`."""
    from torch.utils._pytree import tree_map

    def to_low(value: Any) -> Any:
        if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != low:
            return value.to(low).to(value.dtype)
        return value

    class RoundEachStep(torch.fx.Interpreter):
        def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
            out = super().call_function(target, args, kwargs)
            return tree_map(to_low, out) if _op_name(target) not in _NO_ROUNDING else out

    tensors, _ = split_tensors(tree)
    with torch.no_grad():
        return RoundEachStep(graph).run(*[to_low(t) for t in tensors])
