"""The NaN/Inf objective: a non-finite output from finite inputs that float64 says should be finite."""

from __future__ import annotations

from typing import Any

import torch

from fuzz_core.tensors import output_leaves, tensor_leaves


def inputs_finite(tree: Any) -> bool:
    return all(bool(torch.isfinite(t).all()) for t in tensor_leaves(tree) if t.is_floating_point() or t.is_complex())


def unexpected_nonfinite(out: Any, fp64_out: Any | None) -> tuple[str, int, list[int]] | None:
    """(path, count, first index) of NaN/Inf that IEEE arithmetic does not demand, judged by fp64, or None."""
    fp64_leaves = dict(output_leaves(fp64_out)) if fp64_out is not None else {}
    for path, leaf in output_leaves(out):
        if not isinstance(leaf, torch.Tensor) or not (leaf.is_floating_point() or leaf.is_complex()):
            continue
        bad = ~torch.isfinite(leaf)
        if not bool(bad.any()):
            continue
        ref = fp64_leaves.get(path)
        if not isinstance(ref, torch.Tensor) or ref.shape != leaf.shape:
            continue  # without fp64 we cannot tell IEEE-demanded NaN from a bug
        limit = torch.finfo(leaf.dtype).max if leaf.is_floating_point() else torch.finfo(torch.float32).max
        # fp64 is finite and within this dtype's range: the NaN/Inf is not demanded by the math.
        should_be_finite = torch.isfinite(ref) & (ref.abs() <= limit)
        unexpected = bad & should_be_finite
        if bool(unexpected.any()):
            first = [int(i) for i in torch.nonzero(unexpected)[0].tolist()] if unexpected.dim() else []
            return path, int(unexpected.sum()), first
    return None
