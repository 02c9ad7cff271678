"""Value mutators make several children of one parent at once (Note [Mutation bursts] in
fuzz_core/mutators/builtin.py): every child still replays from its recipe, each mutator keeps its share of the
inputs, and an entry the corpus keeps holds its own values."""

from __future__ import annotations

import json
import math

import pytest
import torch

from fuzz_core.campaign import Campaign
from fuzz_core.cgf.selector import CoverageSelector
from fuzz_core.inputs import Sample
from fuzz_core.mutators.builtin import BURST, DtypeBoundary, GaussianNoise, LargeOffset, SpecialValues
from fuzz_core.mutators.values import boundary_values, special_value
from fuzz_core.spec import HarnessSpec
from tests.fuzz_core.spies import evaluated_samples


def _spec(api: str = "torch.add", seed: int = 5) -> HarnessSpec:
    tensor = {"kind": "tensor", "tensor": {"shape": [4, 6]}}
    return HarnessSpec(api=api, input_source="described", inputs={"args": [tensor, tensor]}, test_mode="jit.trace",
                       seed=seed)


def _same(x: torch.Tensor, y: torch.Tensor) -> bool:
    return (x.shape == y.shape and x.stride() == y.stride() and torch.equal(x.isnan(), y.isnan())
            and torch.equal(x.nan_to_num(), y.nan_to_num()))


class _Steps:
    """The worker's progress callback shape: recipes arrive with their steps already encoded as JSON."""

    def __init__(self) -> None:
        self.records: list[tuple[int, list]] = []

    def __call__(self, recipe: dict) -> None:  # pragma: no cover - the campaign takes `encoded` when there is one
        raise AssertionError("the encoded path is expected")

    def encoded(self, iteration: int, seed_index: int, steps_json: str) -> None:
        self.records.append((seed_index, json.loads(steps_json)))


def test_every_input_of_a_run_replays_from_its_recipe_burst_children_included() -> None:
    progress = _Steps()
    campaign = Campaign(_spec(), selector=CoverageSelector(), progress=progress)
    campaign.prepare()
    seen = evaluated_samples(campaign)
    campaign.run(budget_s=None, max_executions=400)
    assert len(progress.records) == len(seen) == 400
    steps = [step for _, recorded in progress.records for step in recorded]
    assert any(len(step) == 3 for step in steps) and any(len(step) == 2 for step in steps)
    assert any(len(recorded) >= 3 and any(len(s) == 3 for s in recorded) for _, recorded in progress.records)
    fresh = Campaign(_spec())
    fresh.prepare()
    for (seed_index, recorded), sample in zip(progress.records, seen):
        replayed = fresh.replay({"seed_index": seed_index, "steps": recorded})
        assert all(_same(x, y) for x, y in zip(replayed.args, sample.args)), recorded


def test_a_burst_mutator_keeps_its_share_of_the_inputs_with_one_call_per_burst() -> None:
    calls = {"burst": 0}

    class CountedNoise(GaussianNoise):
        def mutate_burst(self, sample, gen):  # type: ignore[no-untyped-def]
            calls["burst"] += 1
            return super().mutate_burst(sample, gen)

    progress = _Steps()
    campaign = Campaign(_spec(), mutators=[CountedNoise(weight=1.0), LargeOffset(weight=1.0)], progress=progress)
    campaign.prepare()
    n = 4000
    campaign.run(budget_s=None, max_executions=n)
    noisy = sum(1 for _, recorded in progress.records if recorded and recorded[-1][0] == "gaussian")
    mutants = sum(1 for _, recorded in progress.records if recorded)
    # each mutator's share is its weight's (1/2), within five standard deviations of a burst-sized draw
    assert abs(noisy - mutants / 2) <= 5 * BURST * math.sqrt(mutants / BURST / 4) + BURST
    assert calls["burst"] == math.ceil(noisy / BURST)  # every child of a burst was handed out


class _KeepBurstChildren(CoverageSelector):
    """Coverage guidance that keeps every burst child in the corpus (and nothing else), listing them in `kept`."""

    def __init__(self) -> None:
        super().__init__()
        self.kept: list = []

    def observe(self, entry, outcome, outputs):  # type: ignore[no-untyped-def]
        super().observe(entry, outcome, outputs)
        if entry.recipe[1] and len(entry.recipe[1][-1]) == 3:
            self.kept.append(entry)
            return True
        return False


def test_an_entry_the_corpus_keeps_holds_its_own_values_not_its_bursts() -> None:
    selector = _KeepBurstChildren()
    campaign = Campaign(_spec(), selector=selector, mutators=[GaussianNoise()])
    campaign.prepare()
    campaign.run(budget_s=None, max_executions=3 * BURST)
    assert selector.kept
    for entry in selector.kept:
        for t in entry.sample.args:
            assert t.untyped_storage().nbytes() == t.nbytes


def test_a_kept_burst_child_keeps_its_parents_other_arguments_as_they_are() -> None:
    """Only the argument the burst made is copied; a strided argument of the parent stays the parent's own."""
    from fuzz_core.modes.layout import noncontiguous_copy

    strided = noncontiguous_copy(torch.randn(4, 6))
    seed = Sample((torch.randn(4, 6), strided), {}, None, "seed")
    selector = _KeepBurstChildren()
    campaign = Campaign(_spec(), selector=selector, mutators=[GaussianNoise()])
    campaign.prepare()
    campaign.seeds = [seed]
    campaign.run(budget_s=None, max_executions=1 + BURST)
    assert selector.kept
    for entry in selector.kept:
        edited, other = entry.sample.args
        assert edited.untyped_storage().nbytes() == edited.nbytes
        assert other is strided and not other.is_contiguous()


def test_noise_bursts_only_contiguous_arguments_so_a_child_keeps_its_parents_strides() -> None:
    base = torch.randn(6, 4)
    sample = Sample((base.t(), base.t()), {}, None, "seed")
    assert GaussianNoise().mutate_burst(sample, torch.Generator().manual_seed(1)) is None
    campaign = Campaign(_spec(), mutators=[GaussianNoise()])
    campaign.prepare()
    corpus = [_entry(sample)]
    for iteration in range(3):
        entry = campaign._next_entry(corpus, [], iteration, torch.Generator().manual_seed(iteration))
        assert len(entry.recipe[1][-1]) == 2  # one child per step
        assert all(t.stride() == base.t().stride() for t in entry.sample.args)


def _entry(sample: Sample):  # type: ignore[no-untyped-def]
    from fuzz_core.mutators import CorpusEntry

    return CorpusEntry(sample, (0, ()))


@pytest.mark.parametrize("mutator", [SpecialValues(), DtypeBoundary()], ids=["special", "boundary"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_value_bursts_put_one_table_value_at_one_to_three_positions(mutator, dtype) -> None:  # type: ignore[no-untyped-def]
    parent = torch.linspace(-2, 2, 48, dtype=dtype).reshape(6, 8)
    other = torch.ones(6, 8, dtype=dtype)
    sample = Sample((parent, other), {}, None, "seed")
    children = mutator.mutate_burst(sample, torch.Generator().manual_seed(4))
    assert children is not None and len(children) == BURST
    table = (boundary_values(dtype) if isinstance(mutator, DtypeBoundary)
             else [special_value(v, dtype) for v in mutator.values])
    allowed = torch.tensor(table, dtype=torch.float64).to(dtype)
    for child in children:
        edited = [i for i, (c, p) in enumerate(zip(child.args, sample.args)) if not _same(c, p)]
        assert len(edited) == 1
        c, p = child.args[edited[0]], sample.args[edited[0]]
        changed = ~((c == p) | (c.isnan() & p.isnan()))
        assert 1 <= int(changed.sum()) <= 3
        values = c[changed]
        assert len(set(values.double().nan_to_num(nan=7e7).tolist())) == 1  # one value per child
        assert bool(((values == allowed[:, None]) | (values.isnan() & allowed[:, None].isnan())).any(0).all())
    assert torch.equal(parent, torch.linspace(-2, 2, 48, dtype=dtype).reshape(6, 8))  # the parent is untouched


NAN_SEGFAULT = '''
import ctypes

def make_inputs(seed):
    return (torch.linspace(-1, 1, 12).reshape(3, 4),), {}

def target(x):
    if bool(torch.isnan(x).any()):
        ctypes.string_at(0)  # null-pointer read: SIGSEGV in the worker, on an input only special values make
    return x * 2
'''


def test_a_crash_on_a_burst_child_saves_that_child_through_the_sandboxed_pool(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The worker's progress record names the burst child (its step with a row); a fresh worker replays it and saves
    the very input that crashed."""
    from fuzz_core import WorkerPool
    from fuzz_core.saved_inputs import load_inputs

    spec = HarnessSpec(api="harness.nan_segv", input_source="code", code=NAN_SEGFAULT, oracle="crash",
                       kind="Crash", seed=1)
    with WorkerPool(1, task_timeout_s=60, preload_opinfo=False, workdir=tmp_path) as pool:
        crash = pool.submit(spec, max_executions=2000).result(timeout=300)
    assert crash.verdict == "crash", crash.reason
    steps = crash.evidence["recipe"]["steps"]
    assert steps and steps[-1][0] == "special" and len(steps[-1]) == 3
    saved = load_inputs(crash.evidence["inputs_path"])
    assert bool(torch.isnan(saved["args"][0]).any())
