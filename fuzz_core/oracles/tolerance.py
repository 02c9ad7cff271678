"""Per-dtype default tolerances (as torch.testing.assert_close) and the tolerance of the fp64 rule."""

from __future__ import annotations

import torch

# (rtol, atol), the defaults of torch.testing.assert_close; other dtypes compare exactly.
DTYPE_PRECISIONS: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex32: (1e-3, 1e-5),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}

# `tol` passed to torch._dynamo.utils.same: its allclose pre-check and its tol/10 slack on the fp64 rule.
# float32 uses same()'s own default (the value PyTorch's accuracy checks run with).
SAME_TOL: dict[torch.dtype, float] = {
    torch.float16: 1e-3, torch.bfloat16: 1e-2, torch.float32: 1e-4, torch.float64: 1e-7,
    torch.complex64: 1e-4, torch.complex128: 1e-7,
}


def tolerance_for(*dtypes: torch.dtype) -> tuple[float, float]:
    """The loosest default tolerance among the dtypes (assert_close's rule for mixed inputs)."""
    rtol, atol = 0.0, 0.0
    for dtype in dtypes:
        r, a = DTYPE_PRECISIONS.get(dtype, (0.0, 0.0))
        rtol, atol = max(rtol, r), max(atol, a)
    return rtol, atol


def same_tol(dtype: torch.dtype) -> float:
    return SAME_TOL.get(dtype, 1e-4)
