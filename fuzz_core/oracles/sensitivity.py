"""Sensitivity: does a perturbation of the input at rounding level move the reference as much as the observed diff?

A check that cannot run raises SensitivityError: the confirmation step turns that into `suspicious`
with the reason, never into a silent pass (a skipped check must not confirm a finding).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from fuzz_core.tensors import map_tensors, output_leaves


class SensitivityError(RuntimeError):
    """The perturbed reference could not be run or compared."""


def perturb(tree: Any, gen: torch.Generator, ulps: float = 2.0) -> Any:
    def nudge(t: torch.Tensor) -> torch.Tensor:
        if not t.is_floating_point() or t.numel() == 0:
            return t
        eps = torch.finfo(t.dtype).eps
        factor = 1 + ulps * eps * (torch.rand(t.shape, generator=gen, dtype=torch.float64) * 2 - 1)
        return (t.double() * factor).to(t.dtype)

    return map_tensors(tree, nudge)


def _perturbed_leaves(run_reference: Callable[[Any], Any], tree: Any, ref_leaf: torch.Tensor, path: str,
                      seed: int, trials: int) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    moved_leaves = []
    for _ in range(trials):
        try:
            moved = dict(output_leaves(run_reference(perturb(tree, gen)))).get(path)
        except Exception as exc:
            raise SensitivityError(f"the perturbed reference raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(moved, torch.Tensor) or moved.shape != ref_leaf.shape:
            raise SensitivityError(f"the perturbed reference output at {path} has another type or shape")
        moved_leaves.append(moved)
    return moved_leaves


def amplification(run_reference: Callable[[Any], Any], tree: Any, ref_out: Any, path: str, observed: float,
                  seed: int, trials: int = 2) -> float | None:
    """The largest finite change of output `path` under input perturbation; None for a non-floating output
    (nothing to amplify); SensitivityError when the check cannot run."""
    ref_leaf = dict(output_leaves(ref_out)).get(path)
    if not isinstance(ref_leaf, torch.Tensor):
        raise SensitivityError(f"no tensor output at {path} to perturb")
    if not ref_leaf.is_floating_point():
        return None
    worst = 0.0
    for moved in _perturbed_leaves(run_reference, tree, ref_leaf, path, seed, trials):
        diff = (moved.double() - ref_leaf.double()).abs()
        diff = diff[torch.isfinite(diff)]
        if diff.numel():
            worst = max(worst, float(diff.max()))
    return worst


def perturbation_overflows(run_reference: Callable[[Any], Any], tree: Any, ref_out: Any, path: str,
                           where: torch.Tensor, seed: int, trials: int = 2) -> bool:
    """True when a rounding-level perturbation makes the reference itself non-finite at `where`: the input
    sits on an overflow edge, so an infinity there is amplification, not a bug."""
    ref_leaf = dict(output_leaves(ref_out)).get(path)
    if not isinstance(ref_leaf, torch.Tensor) or ref_leaf.shape != where.shape:
        raise SensitivityError(f"no tensor output at {path} matching the non-finite positions")
    return any(bool((~torch.isfinite(moved) & where).any())
               for moved in _perturbed_leaves(run_reference, tree, ref_leaf, path, seed, trials))
