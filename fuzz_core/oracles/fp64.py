"""The float64 rule: a difference counts only when the test mode is clearly further from fp64 than the reference.

Finite positions are judged by torch._dynamo.utils.same(ref, res, fp64_ref=...) (PyTorch's own rule);
positions where an output is NaN/Inf are judged one by one, because one NaN makes an RMSE meaningless.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from fuzz_core.oracles.closeness import close_enough
from fuzz_core.oracles.tolerance import same_tol
from fuzz_core.oracles.value_classes import describe_nonfinite


@dataclass
class Judgement:
    test_worse: bool | None  # None: the fp64 reference cannot decide
    # Each side's error against float64 (Note [Errors against float64]).
    ref_error: float = math.nan
    test_error: float = math.nan
    detail: str = ""


# Note [Errors against float64]
# A side's error is the RMSE against float64 over the positions where all three results are finite
# (comparable between the two sides), unless that side has a NaN/Inf where float64 gives something else
# (a finite value, the other infinity, or a number where it gives NaN): then its error is inf. Quoting the
# finite part's RMSE alone printed "error 0" beside an infinite max abs diff. The reason text still
# names the finite part's RMSEs as such ("finite part: ...").


def error_vs_fp64(side: torch.Tensor, fp64: torch.Tensor, finite_rmse: float) -> float:
    """inf when `side` is NaN/Inf somewhere float64 is not the same class, else the finite positions' RMSE."""
    wrong_class = ~_class_equal(side, fp64) & ~(torch.isfinite(side) & torch.isfinite(fp64))
    return math.inf if bool(wrong_class.any()) else finite_rmse


def _rmse(a: torch.Tensor, b: torch.Tensor) -> float:
    if a.numel() == 0:
        return 0.0
    return float(torch.sqrt(torch.mean(torch.square(a.double() - b.double()))))


def _same(ref: torch.Tensor, res: torch.Tensor, fp64: torch.Tensor, tol: float) -> bool:
    from torch._dynamo.utils import same

    return bool(same(ref, res, fp64_ref=fp64, tol=tol, equal_nan=True, log_error=lambda *a, **k: None))


def _class_equal(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Elementwise: same non-finite class (both NaN, or equal infinities)."""
    return (a.isnan() & b.isnan()) | (a == b)


def judge_leaf(ref: torch.Tensor, test: torch.Tensor, fp64: torch.Tensor, *, low_dtype: torch.dtype | None,
               rtol: float, atol: float, ref_name: str = "the reference", test_name: str = "the test mode"
               ) -> Judgement:
    """Is the test mode further from float64? The detail names values where NaN/Inf decide it, and quotes
    RMSEs only over positions where all three results are finite (Note [Truthful reasons])."""
    if ref.shape != fp64.shape:
        return Judgement(None, detail="fp64 output has another shape")
    if not (ref.is_floating_point() and test.is_floating_point()):
        # Integer/bool outputs: the test is wrong where fp64 sides with the reference.
        bad = test.to(torch.int64) != ref.to(torch.int64)
        fp_agrees = (fp64.to(torch.int64) == ref.to(torch.int64))[bad]
        if bool(fp_agrees.all()):
            return Judgement(True, 0.0, float(bad.sum()) / max(1, bad.numel()), "fp64 agrees with the reference")
        return Judgement(None, detail="fp64 disagrees with the reference at the mismatching positions")
    if low_dtype is not None:
        ref = ref.to(test.dtype)  # the best the low dtype can represent
    work_dtype = test.dtype if test.dtype in (torch.float16, torch.bfloat16) else ref.dtype
    r, t, f = ref.double(), test.double(), fp64.double()
    finite = torch.isfinite(r) & torch.isfinite(t) & torch.isfinite(f)
    mismatch = ~close_enough(r, t, rtol, atol)  # the one comparison (Note [One comparison] in oracles/closeness.py)
    nonfinite_bad = mismatch & ~finite
    notes = []
    worse_nonfinite = False
    if bool(nonfinite_bad.any()):
        # Where the outputs disagree on a NaN/Inf, who matches the fp64 result (as a class, or closely)?
        near = lambda x: _class_equal(x, f) | (torch.isfinite(x) & torch.isfinite(f) & (  # noqa: E731
            (x - f).abs() <= atol + 10 * rtol * f.abs()))
        ref_ok, test_ok = near(r)[nonfinite_bad], near(t)[nonfinite_bad]
        if bool((ref_ok & ~test_ok).any()):
            worse_nonfinite = True
            sided = nonfinite_bad.clone()
            sided[nonfinite_bad] = ref_ok & ~test_ok
            count = int(sided.sum())
            notes.append(f"{count} NaN/Inf mismatch{'es' if count != 1 else ''} where fp64 sides with the reference: "
                         + describe_nonfinite(ref, test, fp64, ref_name=ref_name, test_name=test_name, where=sided))
        elif not bool(ref_ok.all()):
            notes.append("the reference's NaN/Inf differs from fp64 too")
    finite_bad = mismatch & finite
    ref_error = _rmse(r[finite], f[finite])
    test_error = _rmse(t[finite], f[finite])
    worse_finite = False
    if bool(finite_bad.any()):
        ref_sel = ref[finite].to(work_dtype)
        test_sel = test[finite].to(work_dtype)
        worse_finite = not _same(ref_sel, test_sel, fp64[finite].double(), same_tol(work_dtype))
        notes.append(f"finite part: fp64 rule {'fails' if worse_finite else 'passes'} "
                     f"(test rmse {test_error:.3g} vs reference {ref_error:.3g})")
    ref_error, test_error = error_vs_fp64(r, f, ref_error), error_vs_fp64(t, f, test_error)
    if worse_finite or worse_nonfinite:
        return Judgement(True, ref_error, test_error, "; ".join(notes))
    if bool(nonfinite_bad.any()) and not bool(finite_bad.any()) and notes and "differs from fp64" in notes[-1]:
        return Judgement(None, ref_error, test_error, "; ".join(notes))
    return Judgement(False, ref_error, test_error, "; ".join(notes))
