"""Objectives: per batch element, did this input reach what we are looking for?"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from fuzz_core.instrument.stats import flat_tensors
from fuzz_core.oracles.closeness import close_enough
from fuzz_core.oracles.tolerance import DTYPE_PRECISIONS


@dataclass
class Observation:
    """What one batch execution produced, for objectives to judge."""

    batch: torch.Tensor
    output: object  # reference output
    activations: Mapping[str, torch.Tensor]  # chosen layer outputs (batch-first)
    test_output: object | None = None  # second mode's output, when there is one


class Objective(Protocol):
    name: str

    def __call__(self, obs: Observation) -> np.ndarray:
        """Boolean mask over the batch: True where the objective is met."""
        ...


def _rows_nonfinite(t: torch.Tensor, batch: int) -> np.ndarray:
    if t.is_quantized:
        t = t.dequantize()
    if not t.is_floating_point() and not t.is_complex():
        return np.zeros(batch, dtype=bool)
    bad = ~torch.isfinite(t.detach())
    if t.dim() == 0 or t.shape[0] != batch:
        return np.full(batch, bool(bad.any()))
    return bad.reshape(batch, -1).any(dim=1).cpu().numpy()


@dataclass(frozen=True)
class NanObjective:
    """A NaN or Inf in the output or in any watched activation (TensorFuzz's NaN objective)."""

    name: str = "nan"

    def __call__(self, obs: Observation) -> np.ndarray:
        batch = obs.batch.shape[0]
        mask = np.zeros(batch, dtype=bool)
        for t in flat_tensors(obs.output) + list(obs.activations.values()):
            mask |= _rows_nonfinite(t, batch)
        return mask


def _as_float(t: torch.Tensor) -> torch.Tensor:
    return (t.dequantize() if t.is_quantized else t).detach().to(torch.float64).cpu()


# torch.testing.assert_close defaults per dtype (rtol, atol): the engine's one tolerance table.
DEFAULT_TOLERANCES = DTYPE_PRECISIONS


@dataclass(frozen=True)
class DisagreementObjective:
    """The reference and test outputs disagree.

    "argmax": the predicted class differs (TensorFuzz's quantisation objective), or one side
    is non-finite where the other is not. "close": some entry is beyond the tolerance of the
    lower-precision dtype (torch.testing defaults), NaN == NaN.
    """

    compare: str = "argmax"
    tolerance: tuple[float, float] | None = None
    name: str = "disagree"

    def __call__(self, obs: Observation) -> np.ndarray:
        if obs.test_output is None:
            raise ValueError("a disagreement objective needs a test mode output")
        batch = obs.batch.shape[0]
        mask = np.zeros(batch, dtype=bool)
        for ref_t, test_t in zip(flat_tensors(obs.output), flat_tensors(obs.test_output), strict=False):
            mask |= self._rows(ref_t, test_t, batch)
        return mask

    def _rows(self, ref_t: torch.Tensor, test_t: torch.Tensor, batch: int) -> np.ndarray:
        ref, test = _as_float(ref_t), _as_float(test_t)
        if ref.shape != test.shape:
            return np.ones(batch, dtype=bool)
        if ref.dim() == 0 or ref.shape[0] != batch:
            ref, test = ref.reshape(1, -1).expand(batch, -1), test.reshape(1, -1).expand(batch, -1)
        ref, test = ref.reshape(batch, -1), test.reshape(batch, -1)
        finite_differs = (torch.isfinite(ref) != torch.isfinite(test)).any(dim=1)
        if self.compare == "argmax":
            # Rows with a non-finite entry have no meaningful argmax; compare finiteness only.
            both_finite = torch.isfinite(ref).all(dim=1) & torch.isfinite(test).all(dim=1)
            differs = (ref.argmax(dim=1) != test.argmax(dim=1)) & both_finite
            return (differs | finite_differs).numpy()
        rtol, atol = self.tolerance or DEFAULT_TOLERANCES.get(
            test_t.dtype if test_t.is_floating_point() else torch.float32, (1.3e-6, 1e-5))
        close = close_enough(ref, test, rtol, atol)  # the one comparison (Note [One comparison] in oracles/closeness.py)
        return (~close.all(dim=1) | finite_differs).numpy()


@dataclass(frozen=True)
class UserObjective:
    """A caller-supplied predicate: f(observation) → bool mask over the batch."""

    predicate: Callable[[Observation], np.ndarray]
    name: str = "user"

    def __call__(self, obs: Observation) -> np.ndarray:
        mask = np.asarray(self.predicate(obs), dtype=bool).reshape(-1)
        if mask.shape[0] != obs.batch.shape[0]:
            raise ValueError(f"user objective returned {mask.shape[0]} flags for a batch of {obs.batch.shape[0]}")
        return mask
