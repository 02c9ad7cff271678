"""Note [Undefined writes and leaking branches]: duplicate-index writes and where-selecting composites."""

from __future__ import annotations

import torch

from fuzz_core.oracles.defined_input import duplicate_write, selects_between_branches
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
