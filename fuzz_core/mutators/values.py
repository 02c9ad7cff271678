"""Special floating-point values by name, per dtype (shared by triggers and mutators)."""

from __future__ import annotations

import torch


def special_value(name: str, dtype: torch.dtype) -> float:
    """The value called `name` in `dtype` (worked out once per pair: mutation asks for one per input)."""
    try:
        return _SPECIAL[(name, dtype)]
    except KeyError:
        value = _SPECIAL[(name, dtype)] = _special_value(name, dtype)
        return value


_SPECIAL: dict[tuple[str, torch.dtype], float] = {}


def _special_value(name: str, dtype: torch.dtype) -> float:
    info = torch.finfo(dtype)
    values = {
        "nan": float("nan"),
        "inf": float("inf"),
        "-inf": float("-inf"),
        "-0.0": -0.0,
        "denormal": info.smallest_normal / 4,  # subnormal in this dtype
        "huge": info.max / 4,
        "tiny": info.smallest_normal,
        # Twice sqrt(max) (≈3.7e19 in float32): a square overflows while the true result of asinh, hypot,
        # std, norm... is small and representable.
        "square_overflow": 2 * info.max ** 0.5,
        # A magnitude beyond 2^24 (exact float32 integers end there): x / y and x - trunc(x / y) * y
        # lose the remainder (fmod, remainder, floor_divide).
        "beyond_2_24": min(3.0 * 2**24 + 1, info.max / 2),
    }
    return values[name]


SPECIAL_VALUE_NAMES = ("nan", "inf", "-inf", "-0.0", "denormal", "huge", "tiny", "square_overflow", "beyond_2_24")


def boundary_values(dtype: torch.dtype) -> list[float]:
    """The dtype's boundary values (a fresh list; worked out once per dtype)."""
    return list(boundary_table(dtype))


def boundary_table(dtype: torch.dtype) -> tuple[float, ...]:
    """boundary_values(dtype) as the shared tuple (no copy: mutation reads it once per input)."""
    values = _BOUNDARY.get(dtype)
    if values is None:
        values = _BOUNDARY[dtype] = tuple(_boundary_values(dtype))
    return values


_BOUNDARY: dict[torch.dtype, tuple[float, ...]] = {}


def _boundary_values(dtype: torch.dtype) -> list[float]:
    if dtype.is_floating_point:
        info = torch.finfo(dtype)
        return [info.max, info.min, info.eps, -info.eps, info.smallest_normal, 1.0 + info.eps, -1.0, 0.0]
    if dtype == torch.bool:
        return [0, 1]
    iinfo = torch.iinfo(dtype)
    return [iinfo.max, iinfo.min, 0, -1, 1]
