"""Objectives judge batches row by row: NaN/Inf anywhere, argmax or tolerance disagreement."""

from __future__ import annotations

import math

import numpy as np
import torch

from fuzz_core.cgf import DisagreementObjective, NanObjective, Observation


def test_nan_objective_flags_rows_with_nonfinite_output_or_activation() -> None:
    batch = torch.zeros(3, 2)
    out = torch.tensor([[1.0, 2.0], [math.nan, 0.0], [0.0, 0.0]])
    act = {"hidden": torch.tensor([[0.0], [0.0], [math.inf]])}
    mask = NanObjective()(Observation(batch, out, act))
    assert mask.tolist() == [False, True, True]


def test_argmax_disagreement() -> None:
    batch = torch.zeros(3, 2)
    ref = torch.tensor([[1.0, 2.0], [3.0, 1.0], [1.0, 1.5]])
    test = torch.tensor([[1.0, 2.0], [1.0, 3.0], [math.nan, 1.5]]).half()
    mask = DisagreementObjective("argmax")(Observation(batch, ref, {}, test))
    assert mask.tolist() == [False, True, True]  # class flip; NaN on one side only


def test_close_disagreement_uses_the_lower_precision_tolerance() -> None:
    batch = torch.zeros(2, 1)
    ref = torch.tensor([[1.0], [1.0]])
    # 5e-4 relative is inside float16's rtol (1e-3) but 5e-3 is not.
    test = torch.tensor([[1.0005], [1.005]], dtype=torch.float64).to(torch.float16)
    mask = DisagreementObjective("close")(Observation(batch, ref, {}, test))
    assert mask.tolist() == [False, True]
    same = DisagreementObjective("close")(Observation(batch, ref, {}, ref.clone()))
    assert not np.any(same)
