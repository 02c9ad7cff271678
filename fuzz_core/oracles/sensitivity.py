"""Sensitivity: does a perturbation of the input at rounding level move the reference as much as the observed diff?"""

from __future__ import annotations

from typing import Any, Callable

import torch

from fuzz_core.tensors import map_tensors, output_leaves


def perturb(tree: Any, gen: torch.Generator, ulps: float = 2.0) -> Any:
    def nudge(t: torch.Tensor) -> torch.Tensor:
        if not t.is_floating_point() or t.numel() == 0:
            return t
        eps = torch.finfo(t.dtype).eps
        factor = 1 + ulps * eps * (torch.rand(t.shape, generator=gen, dtype=torch.float64) * 2 - 1)
        return (t.double() * factor).to(t.dtype)

    return map_tensors(tree, nudge)


def amplification(run_reference: Callable[[Any], Any], tree: Any, ref_out: Any, path: str, observed: float,
                  seed: int, trials: int = 2) -> float | None:
    """The largest change of output `path` under input perturbation, or None when it cannot be measured."""
    gen = torch.Generator().manual_seed(seed)
    ref_leaf = dict(output_leaves(ref_out)).get(path)
    if not isinstance(ref_leaf, torch.Tensor) or not ref_leaf.is_floating_point():
        return None
    worst = 0.0
    for _ in range(trials):
        try:
            moved = dict(output_leaves(run_reference(perturb(tree, gen)))).get(path)
        except Exception:
            return None
        if not isinstance(moved, torch.Tensor) or moved.shape != ref_leaf.shape:
            return None
        diff = (moved.double() - ref_leaf.double()).abs()
        diff = diff[torch.isfinite(diff)]
        if diff.numel():
            worst = max(worst, float(diff.max()))
    return worst
