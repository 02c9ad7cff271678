"""The one tolerance table: per-dtype defaults (as torch.testing.assert_close), the fp64 rule's tolerance and
the low-precision rounding allowance. The engine, localisation, the CGF objectives and the repro template all
read these names, so a tolerance changes in one place."""

from __future__ import annotations

import torch

# (rtol, atol) of torch.testing.assert_close, as torch 2.x documents them: used only where the installed torch
# does not expose its own table (the floating and complex dtypes; other dtypes compare exactly).
_ASSERT_CLOSE_DOCUMENTED: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex32: (1e-3, 1e-5),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


def _assert_close_defaults() -> dict[torch.dtype, tuple[float, float]]:
    """torch.testing's own per-dtype defaults where it exposes them (a private name, so with a fallback)."""
    try:
        from torch.testing._comparison import _DTYPE_PRECISIONS as installed
    except ImportError:  # pragma: no cover - every torch 2.x has it
        installed = {}
    return {dtype: tuple(installed.get(dtype, documented))  # type: ignore[misc]
            for dtype, documented in _ASSERT_CLOSE_DOCUMENTED.items()}


# (rtol, atol), the defaults of torch.testing.assert_close; other dtypes compare exactly.
DTYPE_PRECISIONS: dict[torch.dtype, tuple[float, float]] = _assert_close_defaults()


def default_tolerance(dtype_name: str | None) -> tuple[float, float] | None:
    """assert_close's (rtol, atol) for a dtype named as evidence stores it ("float32", "torch.float16"), or None."""
    dtype = getattr(torch, (dtype_name or "").removeprefix("torch."), None)
    return DTYPE_PRECISIONS.get(dtype) if isinstance(dtype, torch.dtype) else None

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


# A few ulps of the low dtype are rounding, not a bug (false_alarms.md: fp16/bf16 one-ulp differences).
# Every comparison during fuzzing allows this many; the confirmation step then widens the allowance
# by the op's composite depth (rounding_allowance_ulps).
LOW_PRECISION_ULPS = 4
# A composite op rounds after each of its steps in low precision: its allowance grows with the number of
# rounding steps, up to this cap (accumulating in the low dtype or overflowing is orders of magnitude more).
MAX_ROUNDING_ULPS = 16


def rounding_allowance_ulps(depth: int) -> int:
    """Low-precision ulps that ordinary rounding explains for an op that rounds `depth` times in a row."""
    return max(LOW_PRECISION_ULPS, min(MAX_ROUNDING_ULPS, depth))
