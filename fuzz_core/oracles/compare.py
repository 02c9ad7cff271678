"""Compare a test-mode output with the reference output leaf by leaf: shape, dtype, values (NaN == NaN)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy
import torch

from fuzz_core.oracles.closeness import close_enough, rounding_slack
from fuzz_core.oracles.tolerance import LOW_PRECISION_ULPS, tolerance_for
from fuzz_core.tensors import output_leaves


__all__ = ["LOW_PRECISION_ULPS", "Mismatch", "Comparison", "compare_outputs", "compare_tensors", "has_ties"]


@dataclass
class Mismatch:
    """One output leaf that differs; `kind` is value, shape, dtype or structure."""

    kind: str
    path: str
    detail: str = ""
    max_abs_diff: float = 0.0
    max_rel_diff: float = 0.0
    mismatch_count: int = 0
    first_index: list[int] | None = None  # in the coordinates of this output leaf (`shape`)
    rtol: float = 0.0
    atol: float = 0.0
    numel: int = 0
    shape: list[int] | None = None  # the output leaf's shape, which first_index indexes


@dataclass
class Comparison:
    mismatches: list[Mismatch] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Largest |test - ref| / (atol + rtol |ref|) over finite positions: how close a pass came to failing
    # (the adaptive budget gives more time to harnesses whose differences approach the tolerance).
    closeness: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.mismatches

    @property
    def first(self) -> Mismatch:
        return self.mismatches[0]


def _is_index_leaf(path: str, returns_indices: bool, tensor: torch.Tensor) -> bool:
    if tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == torch.bool:
        return False
    return "indices" in path or returns_indices


def has_ties(inputs: list[torch.Tensor]) -> bool:
    """True when the first floating/int input has repeated values (index outputs are then ambiguous)."""
    for t in inputs:
        if t.numel() > 1:
            flat = t.detach().reshape(-1)
            return bool(torch.unique(flat).numel() < flat.numel())
    return False


def _quick_pass(ref: torch.Tensor, test: torch.Tensor, rtol: float, atol: float,
                closeness: list[float] | None) -> bool:
    """Whether every element is within tolerance, in a third of the full path's torch calls (Note [The hot loop] in
    fuzz_core/campaign.py): the largest |test - ref| / (atol + rtol |ref|), in float64 as the full path computes
    it, below 1 means every |test - ref| is below its allowance (a rounded quotient below 1 is a quotient below 1),
    so close_enough holds everywhere; and it is finite only when every element of both is finite (a NaN or an
    infinity makes it NaN or infinite). That maximum is then the closeness the full path would find (elements equal
    in both add quotients of 0). With a NaN or an infinity (numpy path), those elements must be the same in both
    (NaN with NaN) and the rest below 1, as above. Anything else (a quotient of 1 or more, a finite difference
    that overflows, NaN against a number) takes the full path."""
    try:  # numpy's float64 arithmetic is IEEE's, as torch's: the same quotients, at a fraction of the call cost
        if ref.dtype == torch.bfloat16:  # no numpy bfloat16: widened exactly to float32 first
            ref, test = ref.float(), test.float()
        r, t = ref.detach().numpy().astype(numpy.float64), test.detach().numpy().astype(numpy.float64)
    except (RuntimeError, TypeError):  # a tensor numpy cannot view: the same arithmetic in torch
        r, t = ref.detach().to(torch.float64), test.detach().to(torch.float64)
        worst = float(((t - r).abs() / (atol + rtol * r.abs())).max())
    else:
        with numpy.errstate(all="ignore"):  # 0/0 and x/0 give NaN and inf, as torch's division does
            quotient = numpy.abs(t - r) / (atol + rtol * numpy.abs(r))
            worst = float(quotient.max())
            if math.isnan(worst) or math.isinf(worst):
                # A NaN or an infinity somewhere: those elements agree only where both hold the same (isclose with
                # equal_nan), and the closeness is the full path's, over the finite ones.
                special = ~(numpy.isfinite(r) & numpy.isfinite(t))
                if not numpy.array_equal(r[special], t[special], equal_nan=True):
                    return False
                finite = quotient[~special]
                worst = float(finite.max()) if finite.size else 0.0
    if not worst < 1.0:
        return False
    if closeness is not None:
        closeness[0] = max(closeness[0], worst)
    return True


def compare_tensors(ref: torch.Tensor, test: torch.Tensor, path: str, *, low_dtype: torch.dtype | None,
                    compares_dtype: bool, ulps: int = LOW_PRECISION_ULPS,
                    closeness: list[float] | None = None) -> Mismatch | None:
    """The leaf's mismatch or None; `closeness` (a one-element list) is raised to this leaf's closeness."""
    if ref.layout != torch.strided or test.layout != torch.strided:
        if ref.layout != test.layout:
            return Mismatch("dtype", path, f"layout {ref.layout} vs {test.layout}")
        ref, test = ref.to_dense(), test.to_dense()
    if ref.shape != test.shape:
        return Mismatch("shape", path, f"shape {tuple(ref.shape)} vs {tuple(test.shape)}")
    if compares_dtype and ref.dtype != test.dtype:
        return Mismatch("dtype", path, f"dtype {ref.dtype} vs {test.dtype}")
    try:
        if ref.dtype == test.dtype and torch.equal(ref, test):
            return None  # fast path for the common case; NaN never takes it
    except (RuntimeError, NotImplementedError):
        pass  # dtypes without an `equal` kernel (complex32) take the general path
    if low_dtype is not None and ref.is_floating_point() and test.is_floating_point():
        ref = ref.to(test.dtype)  # the best answer representable in the low dtype
    rtol, atol = tolerance_for(ref.dtype, test.dtype)
    if test.dtype != ref.dtype:
        test = test.to(ref.dtype) if not (ref.dtype == torch.bool) else test.bool()
    if ref.numel() == 0:
        return None
    if low_dtype is None and ref.dtype == test.dtype and ref.is_floating_point() and _quick_pass(
            ref, test, rtol, atol, closeness):
        return None
    if ref.is_floating_point() or ref.is_complex():
        r, t = ref.detach().to(torch.complex128 if ref.is_complex() else torch.float64), test.detach().to(
            torch.complex128 if ref.is_complex() else torch.float64)
        # A few ulps of the low dtype are rounding, not a bug (false_alarms.md: fp16/bf16 one-ulp differences).
        # Composite ops round after every step in low precision, so allow `ulps` (oracles/tolerance.py);
        # accumulation in the low dtype or overflow is orders of magnitude more.
        slack = rounding_slack(ref, test, ulps) if low_dtype is not None else 0.0
        close = close_enough(r, t, rtol, atol, slack)  # the one comparison (Note [One comparison])
        diff = (t - r).abs()
        if closeness is not None:
            allowed = atol + rtol * r.abs()
            finite = torch.isfinite(diff) & ~((r == t) | (r.isnan() & t.isnan()))
            if bool(finite.any()):
                closeness[0] = max(closeness[0], float((diff[finite] / allowed[finite]).max()))
        bad = ~close
    else:
        diff = (test.to(torch.int64) - ref.to(torch.int64)).abs().double() if ref.dtype != torch.bool else (
            test != ref).double()
        bad = test != ref
        r = ref.double() if ref.dtype != torch.bool else ref.double()
    count = int(bad.sum())
    if count == 0:
        return None
    bad_diff = diff[bad]
    finite = bad_diff[torch.isfinite(bad_diff)]
    max_abs = float(finite.max()) if finite.numel() else math.inf
    if bad_diff.isnan().any() or bad_diff.isinf().any():
        max_abs = math.inf
    denom = r.abs()[bad] if not r.is_complex() else r.abs()[bad]
    rel = bad_diff / denom.clamp_min(torch.finfo(torch.float64).tiny)
    finite_rel = rel[torch.isfinite(rel)]
    max_rel = float(finite_rel.max()) if finite_rel.numel() and finite.numel() == bad_diff.numel() else math.inf
    first = [int(i) for i in torch.nonzero(bad)[0].tolist()] if bad.dim() else []
    return Mismatch("value", path, f"{count} of {ref.numel()} elements differ", max_abs, max_rel, count, first,
                    rtol, atol, ref.numel(), list(ref.shape))


def compare_outputs(ref_out: Any, test_out: Any, *, low_dtype: torch.dtype | None = None, compares_dtype: bool = True,
                    returns_indices: bool = False, inputs: list[torch.Tensor] | None = None,
                    ulps: int = LOW_PRECISION_ULPS) -> Comparison:
    """All leaf-level differences between two outputs of the same call."""
    result = Comparison()
    closeness = [0.0]
    ref_leaves, test_leaves = output_leaves(ref_out), output_leaves(test_out)
    if [p for p, _ in ref_leaves] != [p for p, _ in test_leaves]:
        result.mismatches.append(Mismatch("structure", "out", f"output structure {[p for p, _ in ref_leaves]} vs "
                                                               f"{[p for p, _ in test_leaves]}"))
        return result
    ties = None
    for (path, ref), (_, test) in zip(ref_leaves, test_leaves):
        if isinstance(ref, torch.Tensor) and isinstance(test, torch.Tensor):
            if _is_index_leaf(path, returns_indices, ref):
                if ties is None:
                    ties = has_ties(inputs or [])
                if ties:
                    result.notes.append(f"{path}: index output not compared (ties in the input)")
                    continue
            mismatch = compare_tensors(ref, test, path, low_dtype=low_dtype, compares_dtype=compares_dtype,
                                       ulps=ulps, closeness=closeness)
        elif isinstance(ref, torch.Tensor) or isinstance(test, torch.Tensor):
            mismatch = Mismatch("structure", path, f"{type(ref).__name__} vs {type(test).__name__}")
        elif isinstance(ref, float) and isinstance(test, float):
            same_value = ref == test or (math.isnan(ref) and math.isnan(test))
            mismatch = None if same_value or abs(ref - test) <= 1e-5 + 1.3e-6 * abs(ref) else Mismatch(
                "value", path, f"{ref!r} vs {test!r}", abs(ref - test), abs(ref - test) / max(abs(ref), 1e-300), 1)
        else:
            mismatch = None if ref == test else Mismatch("value", path, f"{ref!r} vs {test!r}", mismatch_count=1)
        if mismatch is not None:
            result.mismatches.append(mismatch)
    result.closeness = closeness[0]
    return result
