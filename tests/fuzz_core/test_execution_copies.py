"""Note [Input copies] (fuzz_core/execution.py): which executions run on a private copy of the input, counted;
an op that writes to its input never leaks into the other mode's input."""

from __future__ import annotations

import pytest
import torch

import fuzz_core.execution as execution
from fuzz_core.campaign import Campaign
from fuzz_core.execution import copies_inputs, execute
from fuzz_core.inputs import Sample
from fuzz_core.modes import get_mode
from fuzz_core.spec import HarnessSpec
from fuzz_core.target import build_target


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts execute's private copies (one entry per copied execution)."""
    counted: list[int] = []
    real = execution.clone_tree

    def counting(tree):  # type: ignore[no-untyped-def]
        counted.append(1)
        return real(tree)

    monkeypatch.setattr(execution, "clone_tree", counting)
    return counted


def _sample(*args: object, **kwargs: object) -> Sample:
    return Sample(args=tuple(args), kwargs=dict(kwargs))


@pytest.mark.parametrize("mode_name", ["eager", "jit.trace"])
def test_a_builtin_that_neither_writes_nor_aliases_runs_on_the_input_itself(mode_name: str, copies: list[int]) -> None:
    x = torch.randn(4, 4)
    run = execute(get_mode(mode_name), build_target("torch.sigmoid"), _sample(x), reseed=None)
    assert run.status == "ok" and torch.equal(run.output, torch.sigmoid(x))
    run = execute(get_mode(mode_name), build_target("torch.add"), _sample(x, x, alpha=2), reseed=None)
    assert run.status == "ok" and torch.equal(run.output, x + 2 * x)
    assert copies == []


@pytest.mark.parametrize("api, args, kwargs", [
    ("torch.Tensor.add_", (1.0,), {}),                       # writes self
    ("torch.sigmoid", (), {"out": "tensor"}),                # out= writes a tensor of the input
    ("torch.Tensor.transpose", (0, 1), {}),                  # returns a view of its input
    ("torch.nn.functional.relu", (), {"inplace": True}),     # a Python function: never trusted
    ("torch.nn.functional.relu6", (), {}),
    ("torch.Tensor.copy_", ("tensor",), {}),
])
def test_a_target_that_can_write_or_alias_runs_on_a_copy_and_leaves_the_input_alone(
        api: str, args: tuple, kwargs: dict, copies: list[int]) -> None:
    x = torch.randn(4, 4) - 0.5
    before = x.clone()
    fill = lambda v: torch.zeros(4, 4) if v == "tensor" else v  # noqa: E731
    sample = _sample(x, *[fill(a) for a in args], **{k: fill(v) for k, v in kwargs.items()})
    for mode_name in ("eager", "jit.trace"):
        execute(get_mode(mode_name), build_target(api), sample, reseed=None)
    assert len(copies) == 2
    assert torch.equal(x, before)
    assert all(torch.equal(t, torch.zeros(4, 4)) for t in sample.args[1:] + tuple(sample.kwargs.values())
               if isinstance(t, torch.Tensor))


@pytest.mark.parametrize("mode_name", ["variant:inplace", "variant:out", "layout:noncontiguous", "grad",
                                       "compile:eager"])
def test_modes_that_do_more_than_call_the_target_always_copy(mode_name: str) -> None:
    assert copies_inputs(get_mode(mode_name), build_target("torch.sigmoid"), _sample(torch.randn(3)))


def test_the_in_place_variant_never_leaks_into_the_reference_input(copies: list[int]) -> None:
    x = torch.randn(4, 4)
    before = x.clone()
    run = execute(get_mode("variant:inplace"), build_target("torch.sigmoid"), _sample(x), reseed=None)
    assert run.status == "ok" and torch.equal(run.output, torch.sigmoid(before))
    assert torch.equal(x, before) and copies == [1]
    assert execute(get_mode("eager"), build_target("torch.sigmoid"), _sample(x), reseed=None).status == "ok"
    assert copies == [1]  # the reference of the same input: no copy


def test_a_write_the_schema_did_not_announce_is_caught_and_copied_from_then_on(
        monkeypatch: pytest.MonkeyPatch, copies: list[int]) -> None:
    target = build_target("torch.Tensor.add_")
    monkeypatch.setitem(execution._PURE, target.fn, frozenset({"out"}))  # pretend the schema said "pure"
    x = torch.zeros(3)
    run = execute(get_mode("eager"), target, _sample(x, 1.0), reseed=None)
    assert run.status == "na" and "wrote to its input" in str(run.error)
    assert copies == []
    y = torch.zeros(3)
    run = execute(get_mode("eager"), target, _sample(y, 1.0), reseed=None)
    assert run.status == "ok" and torch.equal(y, torch.zeros(3)) and copies == [1]


def test_campaign_on_an_in_place_op_compares_both_modes_on_the_same_input(copies: list[int]) -> None:
    tensor = {"kind": "tensor", "tensor": {"shape": [4, 4]}}
    spec = HarnessSpec(api="torch.Tensor.mul_", input_source="described", inputs={"args": [tensor, tensor]},
                       test_mode="layout:noncontiguous", seed=2)
    campaign = Campaign(spec)
    campaign.prepare()
    campaign.run(budget_s=None, max_executions=40)
    assert campaign.tally.executions == 40 and not any("wrote to its input" in r for r in campaign.tally.na_reasons)
    assert campaign.tally.compared >= 30  # the rest: zero-size mutants the layout mode cannot lay out
    assert not campaign.findings, [f.verdict for f in campaign.findings.values()]
    assert len(copies) >= 2 * campaign.tally.compared  # both modes of every compared input ran on a copy


def test_campaign_on_a_pure_op_copies_nothing(copies: list[int]) -> None:
    tensor = {"kind": "tensor", "tensor": {"shape": [4, 4]}}
    spec = HarnessSpec(api="torch.sigmoid", input_source="described", inputs={"args": [tensor]},
                       test_mode="jit.trace", seed=2)
    campaign = Campaign(spec)
    campaign.prepare()
    campaign.run(budget_s=None, max_executions=40)
    assert campaign.tally.compared == 40 and not campaign.findings
    assert copies == []
