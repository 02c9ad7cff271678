"""Input summaries for `review show`: NaN and ±inf counted for every tensor, small or large."""

from __future__ import annotations

import math

import torch

from agent.review.values import tensor_values


def test_a_small_tensor_counts_negative_infinity_as_inf() -> None:
    view = tensor_values("x", torch.tensor([1.0, -math.inf, math.nan]))
    assert view.values == [1.0, "-inf", "nan"]
    assert (view.inf, view.nan) == (1, 1)


def test_a_large_tensor_counts_both_infinities() -> None:
    x = torch.zeros(100)
    x[3], x[50] = -math.inf, math.inf
    view = tensor_values("x", x)
    assert view.inf == 2 and (view.min, view.max) == (0.0, 0.0)
