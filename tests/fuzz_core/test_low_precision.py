"""Note [What the low dtype can hold]: range, range-edge and representation rules as pure functions."""

from __future__ import annotations

import torch

from fuzz_core.oracles.low_precision import (
    beyond_range,
    edge_overflow,
    intermediate_bound,
    low_dtype_of,
    unrepresentable_parameters,
)


def test_one_minus_a_tiny_eps_is_one_in_float16_but_not_in_float32() -> None:
    expected = ["eps=1e-06: 1 - 1e-06 rounds to 1 in float16"]
    assert unrepresentable_parameters(((), {"eps": 1e-6}), torch.float16) == expected
    assert unrepresentable_parameters(((), {"eps": 1e-6}), torch.bfloat16)
    assert unrepresentable_parameters(((), {"eps": 1e-2}), torch.float16) == []


def test_an_eps_below_the_smallest_subnormal_rounds_to_zero() -> None:
    assert unrepresentable_parameters(((torch.ones(2), 1e-9), {}), torch.float16) == [
        "argument 1=1e-09 rounds to 0 in float16"]


def test_integers_and_booleans_are_not_parameters_to_round() -> None:
    assert unrepresentable_parameters(((torch.ones(2), 0, True), {"dim": 1}), torch.float16) == []


def test_the_answer_beyond_float16_max_makes_inf_right() -> None:
    fp64 = torch.tensor([65504.0, 65600.0, float("inf"), -1e6], dtype=torch.float64)
    assert beyond_range(fp64, torch.float16).tolist() == [False, True, True, True]


def test_partial_products_reach_the_edge_even_when_a_zero_ends_them() -> None:
    x = torch.tensor([300.0, 300.0, 300.0, -0.0])
    bound = intermediate_bound(torch.prod, ((x,), {}), lambda out: out)
    assert bound is not None and float(bound) == 300.0 ** 3
    assert edge_overflow(bound, torch.tensor(True), torch.float16)
    assert not edge_overflow(bound, torch.tensor(True), torch.float32)


def test_an_op_with_a_domain_has_no_bound() -> None:
    assert intermediate_bound(lambda x: torch.linalg.cholesky(x), ((torch.zeros(2, 3),), {}), lambda o: o) is None


def test_the_low_dtype_comes_from_the_mode_or_the_inputs() -> None:
    assert low_dtype_of(torch.bfloat16, ((torch.ones(1),), {})) == torch.bfloat16
    assert low_dtype_of(None, ((torch.ones(1, dtype=torch.float16),), {})) == torch.float16
    assert low_dtype_of(None, ((torch.ones(1),), {})) is None
