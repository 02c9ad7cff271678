"""What a low dtype can hold: the rules that keep range and representation limits from being reported as bugs.

Note [What the low dtype can hold]
A float16/bfloat16 result is judged by what the dtype can represent (false_alarms.md):
- Out of range: where the float64 answer lies beyond the low dtype's largest finite value, inf is the right
  answer (65504 for float16, ~3.39e38 for bfloat16), and NaN downstream of it is IEEE's.
- Intermediate overflow near the range edge: where the answer fits but the computation passes through
  magnitudes beyond the range (a product of entries near 1e37 in bfloat16, a partial product that overflows
  and is then multiplied by -0), maintainers close the report as expected. The magnitude the computation
  passes through is bounded by the op applied to |inputs| in float64 (zeros read as ones, so a zero factor
  does not hide the partial products before it). At most `suspicious`. Not for reductions that PyTorch
  accumulates in float on CPU (sum, mean, var, norm, ...): an overflow there is a real low-precision
  accumulation bug.
- A parameter the low dtype cannot represent (`eps=1e-6` in float16: `1 - eps` is 1; `eps=1e-8`: it is 0)
  makes the kernel's clamp or guard vanish; maintainers call it documented behaviour. At most `suspicious`.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from fuzz_core.tensors import LOW_PRECISION, map_tensors, tensor_leaves

# Reductions whose CPU kernels accumulate half/bfloat16 in float (at::acc_type): an intermediate overflow
# there is the bug the low-precision pattern looks for, never excused as "near the range edge".
FLOAT_ACCUMULATING_REDUCTIONS = frozenset({
    "sum", "nansum", "mean", "nanmean", "var", "std", "var_mean", "std_mean", "norm", "vector_norm",
    "matrix_norm", "logsumexp", "softmax", "log_softmax", "cumsum", "layer_norm", "group_norm", "batch_norm",
    "instance_norm", "rms_norm", "cosine_similarity", "pairwise_distance",
})
# Scans: each output is a partial result of the later ones along the scan dimension (Note [A scan passes
# through its own outputs]).
SCAN_OPS = frozenset({"cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"})
# Partial results within this factor of the low dtype's largest value count as reaching the edge: the
# rounding of the inputs to the low dtype alone moves a value this close over it.
EDGE_FACTOR = 0.5


def low_dtype_of(compute_dtype: torch.dtype | None, tree: Any) -> torch.dtype | None:
    """The low dtype a comparison is computed in: the test mode's, else a low floating input dtype."""
    if compute_dtype in LOW_PRECISION:
        return compute_dtype
    for t in tensor_leaves(tree):
        if t.dtype in LOW_PRECISION:
            return t.dtype
    return None


def beyond_range(fp64: torch.Tensor, low: torch.dtype) -> torch.Tensor:
    """Elementwise: the float64 answer is not a finite value of `low` (inf is right there)."""
    f = fp64.double()
    return ~torch.isfinite(f) | (f.abs() > torch.finfo(low).max)


def nonfinite_where_answer_fits(test: torch.Tensor, fp64: torch.Tensor, low: torch.dtype) -> torch.Tensor:
    """Elementwise: the test output is NaN/Inf where the float64 answer is finite and fits `low`."""
    if test.shape != fp64.shape or not test.is_floating_point():
        return torch.zeros((), dtype=torch.bool)
    return ~torch.isfinite(test) & ~beyond_range(fp64, low)


def _scalar_slots(tree: Any) -> list[tuple[str, float]]:
    args, kwargs = tree
    slots = [(f"argument {i}", v) for i, v in enumerate(args)] + list(kwargs.items())
    return [(name, float(v)) for name, v in slots if isinstance(v, float) and not isinstance(v, bool)]


def unrepresentable_parameters(tree: Any, low: torch.dtype) -> list[str]:
    """Float parameters in (0, 1) the low dtype cannot hold: p rounds to 0, or 1 - p rounds to 1."""
    words = []
    name = str(low).removeprefix("torch.")
    for slot, value in _scalar_slots(tree):
        size = abs(value)
        if not 0.0 < size < 1.0:
            continue
        if float(torch.tensor(size, dtype=low)) == 0.0:
            words.append(f"{slot}={value:g} rounds to 0 in {name}")
        elif float(torch.tensor(1.0 - size, dtype=low)) == 1.0:
            words.append(f"{slot}={value:g}: 1 - {size:g} rounds to 1 in {name}")
    return words


def _abs_nonzero(t: torch.Tensor) -> torch.Tensor:
    if not t.is_floating_point():
        return t
    magnitude = t.detach().double().abs()
    return torch.where(magnitude == 0, torch.ones_like(magnitude), magnitude)


def intermediate_bound(fn: Callable[..., Any], tree: Any, path_leaf: Callable[[Any], Any]) -> torch.Tensor | None:
    """The op applied to |inputs| (zeros read as ones) in float64: a bound on the partial results the computation
    passes through, at the output leaf `path_leaf` picks; None where the op does not accept such inputs."""
    args, kwargs = map_tensors(tree, _abs_nonzero)
    try:
        with torch.no_grad():
            leaf = path_leaf(fn(*args, **kwargs))
    except Exception:  # noqa: BLE001 - an op with a domain (logit, acos) has no such bound
        return None
    return leaf.double() if isinstance(leaf, torch.Tensor) and leaf.is_floating_point() else None


# Reductions that accumulate the sum of squared deviations from the mean (Welford's M2): Note [A float
# accumulator's own range].
VARIANCE_REDUCTIONS = frozenset({"var", "std", "var_mean", "std_mean"})


def variance_accumulator_bound(variance_like: torch.Tensor, std: bool, input_numel: int) -> torch.Tensor:
    """Note [A float accumulator's own range]

    The stable algorithms for var/std (Welford, two-pass) accumulate M2 = sum((x - mean)^2), which is the
    variance times (N - correction); ``N * var`` (var = std^2 for std) bounds it from above, N being the
    elements reduced into each output. When M2 itself lies beyond float32's largest value, no float accumulator
    holds it: CPU eager (which accumulates float32 in double) gets the answer, CUDA eager and compiled kernels
    (which accumulate in float) overflow, and which one a mode matches is the accumulator's width. A variance of
    [0, 3.7e19, 0, 0] is 3.40282e38, one float32 ulp below the largest float, while its M2 is 1.02e39. Below
    that range a float accumulator always suffices, so an overflow there stays a bug (FLOAT_ACCUMULATING_REDUCTIONS)."""
    values = variance_like.double()
    if std:
        values = values * values
    per_output = max(input_numel // max(values.numel(), 1), 1)
    return values.abs() * per_output


# Ops that accumulate many values into one element of an output in the output's own dtype (Note [Accumulating
# writes in a low dtype]).
ACCUMULATING_WRITES = frozenset({"index_add", "index_reduce", "scatter_add", "scatter_reduce", "index_put", "put",
                                 "bincount", "histc"})


def accumulation_depth(tree: Any) -> int:
    """Note [Accumulating writes in a low dtype]

    index_add, index_reduce, scatter_add/scatter_reduce and index_put/put with accumulate write many values into one
    element, in the output's dtype: a float16 index_reduce(mean) over five values of magnitude 9 rounds every
    partial sum to float16, and the maintainers close that as expected (an index_put accumulating 131k float16
    values into 4 slots, on CPU against CUDA). The depth is the most values one element receives: the largest count
    of one index value among the integer index tensors of the call, plus one for the element's own value."""
    counts = [int(torch.unique(t.flatten(), return_counts=True)[1].max()) for t in tensor_leaves(tree)
              if t.dtype in (torch.int64, torch.int32) and t.numel()]
    return max(counts, default=0) + 1


def scan_prefix_bound(bound: torch.Tensor | None, tree: Any) -> torch.Tensor | None:
    """Note [A scan passes through its own outputs]

    A scan's k-th output is computed from its (k-1)-th: cumprod([8e34, -1e35, 3e-39]) passes through 8e69 on the
    way to 2.5e31. So the partial results behind position k are bounded by the largest bound at or before k
    along the scan dimension, not by the bound at k alone. Whether an accumulator of float (a bfloat16 kernel)
    or of double (the float32 one) carries such a prefix through is the accumulator's width, and maintainers
    close "the product recovered in float32 but not in bfloat16" as expected. The running maximum of ``bound``
    along the scan's ``dim`` (the second positional argument or the ``dim`` keyword); ``bound`` unchanged when the
    dimension cannot be read."""
    if bound is None or bound.dim() == 0:
        return bound
    args, kwargs = tree
    dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
    if not isinstance(dim, int) or isinstance(dim, bool) or not -bound.dim() <= dim < bound.dim():
        return bound
    return bound.nan_to_num(nan=0.0).cummax(dim).values


def edge_overflow(bound: torch.Tensor | None, where: torch.Tensor, low: torch.dtype) -> bool:
    """At the positions `where`, the partial results reach the low dtype's range edge (finite bounds only: an
    infinite bound says the op left its domain, not that it is large)."""
    if bound is None or bound.shape != where.shape or not bool(where.any()):
        return False
    at = bound[where]
    at = at[torch.isfinite(at)]
    return bool(at.numel()) and bool((at > EDGE_FACTOR * torch.finfo(low).max).any())
