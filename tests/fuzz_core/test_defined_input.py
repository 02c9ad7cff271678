"""Note [Undefined writes and leaking branches]: duplicate-index writes and where-selecting composites."""

from __future__ import annotations

import torch

from fuzz_core.oracles.defined_input import duplicate_write, probability_outside, selects_between_branches
from fuzz_core.oracles.depth import trace_composite


def test_duplicate_indices_in_index_copy_are_undefined() -> None:
    why = duplicate_write("index_copy", (torch.zeros(4, 2), 0, torch.tensor([1, 1]), torch.ones(2, 2)), {})
    assert why is not None and "undefined" in why


def test_accumulating_writes_are_defined() -> None:
    args = (torch.zeros(4), (torch.tensor([1, 1]),), torch.ones(2))
    assert duplicate_write("index_put", args, {"accumulate": True}) is None
    assert duplicate_write("index_put", args, {}) is not None


def test_scatter_duplicates_count_along_its_dim_only() -> None:
    index = torch.tensor([[0, 1, 2], [0, 1, 2]])  # distinct along dim 1, repeated along dim 0
    assert duplicate_write("scatter", (torch.zeros(2, 3), 1, index, torch.ones(2, 3)), {}) is None
    assert duplicate_write("scatter", (torch.zeros(2, 3), 0, index, torch.ones(2, 3)), {}) is not None


def test_reads_with_repeated_indices_are_defined() -> None:
    assert duplicate_write("index_select", (torch.zeros(4), 0, torch.tensor([1, 1])), {}) is None


def test_a_where_composite_selects_between_branches() -> None:
    x = torch.tensor([1.0, -1.0])
    leaky = trace_composite(lambda t: torch.where(t > 0, torch.sqrt(t), torch.zeros_like(t)), ((x,), {}))
    plain = trace_composite(lambda t: torch.sqrt(t.abs()), ((x,), {}))
    assert selects_between_branches(leaky) and not selects_between_branches(plain)


def test_class_probabilities_outside_zero_one_are_out_of_domain() -> None:
    logits, target = torch.zeros(2, 3), torch.tensor([[0.2, 0.8, 0.0], [1.5, -0.5, 0.0]])
    why = probability_outside("cross_entropy", (logits, target), {})
    assert why is not None and "2 value(s) outside [0, 1]" in why and "from -0.5 to 1.5" in why
    assert probability_outside("cross_entropy", (logits,), {"target": target}) is not None
    assert probability_outside("CrossEntropyLoss", (logits, target), {}) is not None


def test_probability_targets_inside_zero_one_and_class_indices_are_defined() -> None:
    logits = torch.zeros(2, 3)
    assert probability_outside("cross_entropy", (logits, torch.tensor([[0.2, 0.8, 0.0], [1.0, 0.0, 0.0]])), {}) is None
    assert probability_outside("cross_entropy", (logits, torch.tensor([2, 7])), {}) is None  # indices: not this rule


def test_the_target_is_found_at_its_own_position() -> None:
    x, weight, target = torch.zeros(4), torch.zeros(3, 4), torch.tensor([0.0, 4.0, 0.0])
    assert probability_outside("linear_cross_entropy", (x, weight, target), {}) is not None
    assert probability_outside("linear_cross_entropy", (x, weight), {}) is None


def test_kl_div_with_log_targets_takes_any_value() -> None:
    args = (torch.zeros(3), torch.tensor([-2.0, 0.5, 3.0]))
    assert probability_outside("kl_div", args, {}) is not None
    assert probability_outside("kl_div", args, {"log_target": True}) is None
