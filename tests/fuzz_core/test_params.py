"""Trigger parameters land in the slot the call already uses, or in a module's constructor."""

from __future__ import annotations

import torch

from fuzz_core.inputs import Sample
from fuzz_core.inputs.params import place_params
from fuzz_core.target import build_target


def test_positional_parameter_is_replaced_not_duplicated() -> None:
    target = build_target("torch.cumsum")
    placed = place_params(Sample((torch.ones(3, 2), 1)), {"dim": 0}, target)
    assert placed.args[1] == 0 and placed.kwargs == {}
    torch.cumsum(*placed.args, **placed.kwargs)  # no "multiple values for argument 'dim'"


def test_missing_parameter_becomes_a_keyword() -> None:
    target = build_target("torch.var")
    placed = place_params(Sample((torch.ones(3),)), {"keepdim": True, "correction": 0}, target)
    assert placed.kwargs == {"keepdim": True, "correction": 0}
    torch.var(*placed.args, **placed.kwargs)


def test_module_parameters_go_to_the_constructor() -> None:
    target = build_target("torch.nn.MaxPool2d")
    placed = place_params(Sample((torch.ones(1, 1, 4, 4),), {}, {"kernel_size": 2}), {"kernel_size": 3, "ceil_mode": True}, target)
    assert placed.ctor == {"kernel_size": 3, "ceil_mode": True} and placed.kwargs == {}
    torch.nn.MaxPool2d(**placed.ctor)(*placed.args)


def test_builtin_without_python_signature_uses_the_aten_schema() -> None:
    target = build_target("torch.nn.functional.cosine_similarity")
    x = torch.ones(2, 3)
    placed = place_params(Sample((x, x, 1)), {"dim": -1}, target)
    assert placed.args[2] == -1 and "dim" not in placed.kwargs
