"""Summary statistics of one tensor, small enough to store as evidence."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch


@dataclass(frozen=True)
class TensorStats:
    shape: tuple[int, ...]
    dtype: str
    numel: int
    finite: bool
    nan_count: int
    inf_count: int
    min: float | None
    max: float | None
    mean: float | None
    abs_max: float | None

    def to_dict(self) -> dict:
        return asdict(self)


def tensor_stats(t: torch.Tensor) -> TensorStats:
    """Statistics of a tensor; value statistics cover its finite entries only."""
    shape = tuple(int(s) for s in t.shape)
    dtype = str(t.dtype).removeprefix("torch.")
    numel = t.numel()
    if numel == 0 or t.is_quantized or t.dtype == torch.bool or t.is_complex() or t.is_sparse:
        # Quantized, bool, complex and sparse tensors have no meaningful min/max here.
        return TensorStats(shape, dtype, numel, True, 0, 0, None, None, None, None)
    x = t.detach()
    if not x.is_floating_point():
        xf = x.to(torch.float64)
        return TensorStats(shape, dtype, numel, True, 0, 0, float(xf.min()), float(xf.max()),
                           float(xf.mean()), float(xf.abs().max()))
    finite_mask = torch.isfinite(x)
    if bool(finite_mask.all()):
        # The common case: one pass for min/max, no masking, no float64 copy of the tensor.
        lo, hi = torch.aminmax(x)
        return TensorStats(shape, dtype, numel, True, 0, 0, float(lo), float(hi),
                           float(x.mean(dtype=torch.float64)), max(abs(float(lo)), abs(float(hi))))
    nan_count = int(torch.isnan(x).sum())
    inf_count = numel - nan_count - int(finite_mask.sum())
    finite_vals = x[finite_mask].to(torch.float64)
    if finite_vals.numel() == 0:
        return TensorStats(shape, dtype, numel, False, nan_count, inf_count, None, None, None, None)
    return TensorStats(
        shape, dtype, numel, False, nan_count, inf_count,
        float(finite_vals.min()), float(finite_vals.max()), float(finite_vals.mean()),
        float(finite_vals.abs().max()),
    )


def flat_tensors(obj: object) -> list[torch.Tensor]:
    """Every tensor inside a (possibly nested) output, in a stable order."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in flat_tensors(item)]
    if isinstance(obj, dict):
        return [t for key in sorted(obj, key=str) for t in flat_tensors(obj[key])]
    if hasattr(obj, "__dataclass_fields__"):
        return [t for name in obj.__dataclass_fields__ for t in flat_tensors(getattr(obj, name))]
    return []


def all_finite(tensors: list[torch.Tensor]) -> bool:
    """True when no floating tensor in the list holds a NaN or an Inf."""
    for t in tensors:
        if t.is_floating_point() and not t.is_quantized and t.numel() and not bool(torch.isfinite(t).all()):
            return False
    return True
