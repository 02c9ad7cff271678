"""The coverage-guided CorpusSelector plugs into the API campaign and grows its corpus."""

from __future__ import annotations

import torch

from fuzz_core.campaign import Campaign
from fuzz_core.cgf.selector import CoverageSelector
from fuzz_core.inputs import Sample
from fuzz_core.mutators import CorpusEntry, CorpusSelector, UniformSelector
from fuzz_core.spec import HarnessSpec


def _run(selector: CorpusSelector, executions: int = 40) -> list[dict]:
    recorded: list[dict] = []
    campaign = Campaign(HarnessSpec(api="torch.add", test_mode="variant:method", seed=3),
                        selector=selector, progress=recorded.append)
    campaign.prepare()
    campaign.run(budget_s=None, max_executions=executions)
    assert campaign.tally.executions == executions
    return recorded


def test_satisfies_the_campaign_protocol() -> None:
    assert isinstance(CoverageSelector(), CorpusSelector)


def test_coverage_guidance_breeds_mutants_of_mutants() -> None:
    guided = CoverageSelector(threshold=0.01)
    guided_recipes = _run(guided)
    uniform_recipes = _run(UniformSelector())
    # The uniform selector never grows the corpus: every input is one step from a seed.
    assert max(len(r["steps"]) for r in uniform_recipes) <= 1
    # Novel inputs joined the corpus and were mutated further.
    assert guided.added_for_features > 0
    assert max(len(r["steps"]) for r in guided_recipes) >= 2


def test_seeds_and_rejected_inputs_never_join() -> None:
    selector = CoverageSelector(threshold=0.0)
    seed = CorpusEntry(Sample(args=(torch.zeros(3),)), (0, ()))
    assert selector.observe(seed, "pass", None) is False  # indexed, not re-added
    child = CorpusEntry(Sample(args=(torch.ones(3),)), (0, (("gaussian", 1),)))
    assert selector.observe(child, "skip", None) is False
    assert selector.observe(child, "pass", None) is True
    assert selector.observe(child, "pass", None) is False  # same features: not novel any more


def test_new_op_triples_make_an_input_join() -> None:
    selector = CoverageSelector(threshold=1e30)  # feature novelty effectively off
    x32, y32, x64 = torch.zeros(3), torch.full((3,), 0.5), torch.zeros(3, dtype=torch.float64)
    seed = CorpusEntry(Sample(args=(x32,)), (0, ()))
    with selector.op_scope():
        torch.sin(x32)
    selector.observe(seed, "pass", None)
    same = CorpusEntry(Sample(args=(y32,)), (0, (("gaussian", 1),)))
    with selector.op_scope():
        torch.sin(y32)
    assert selector.observe(same, "pass", None) is False
    other_dtype = CorpusEntry(Sample(args=(x64,)), (0, (("dtype", 2),)))
    with selector.op_scope():
        torch.sin(x64)
    assert selector.observe(other_dtype, "pass", None) is True
    assert selector.stats()["op_additions"] == 1


def test_selection_prefers_recent_entries() -> None:
    selector = CoverageSelector(recent=5)
    corpus = [object()] * 100
    gen = torch.Generator().manual_seed(0)
    picks = [selector.select(corpus, gen) for _ in range(2000)]
    assert sum(p >= 95 for p in picks) / len(picks) > 0.8
    assert min(picks) < 50


# Note [Sampled coverage]: seeds and the first `measure_first` mutants are measured, then one mutant in
# `measure_every`. These count measured inputs; nothing here depends on time.
def _entry(steps: int) -> CorpusEntry:
    return CorpusEntry(Sample(args=(torch.zeros(3),)), (0, tuple(("gaussian", i) for i in range(steps))))


def test_measures_seeds_the_first_mutants_then_one_in_every() -> None:
    selector = CoverageSelector(measure_first=64, measure_every=16)
    answers = []
    for i in range(400):
        seed = i % 50 == 0  # seeds interleaved: always measured, and not counted among the mutants
        answers.append((seed, selector.measures(_entry(0 if seed else 1 + i % 3))))
    assert all(measured for seed, measured in answers if seed)
    mutants = [measured for seed, measured in answers if not seed]
    assert len(mutants) == selector.mutants_seen == 392
    assert all(mutants[:64])
    assert [n for n, measured in enumerate(mutants) if measured and n >= 64] == list(range(64, 392, 16))
    assert sum(mutants) == 64 + len(range(64, 392, 16))  # 64 + 21 = 85 of 392


def test_an_unmeasured_mutant_never_joins_and_is_not_indexed() -> None:
    selector = CoverageSelector(threshold=0.0, measure_first=1, measure_every=4)  # mutants 0, 1, 5, 9, ...
    joined = []
    for n, value in enumerate((1.0, 2.0, 3.0, 4.0, 5.0, 6.0)):  # every one novel (threshold 0, new values)
        entry = CorpusEntry(Sample(args=(torch.full((3,), value),)), (0, (("gaussian", n),)))
        measured = selector.measures(entry)
        joined.append((measured, selector.observe(entry, "pass", None)))
    assert joined == [(True, True), (True, True), (False, False), (False, False), (False, False), (True, True)]
    stats = selector.stats()
    assert stats["mutants"] == 6 and stats["measured"] == 3 and stats["indexed"] == 3
    assert selector.added_for_features == 3


def test_the_interval_doubles_while_measuring_brings_nothing_and_falls_back_when_it_does() -> None:
    def measured_ordinals(selector: CoverageSelector, values) -> list[int]:  # type: ignore[no-untyped-def]
        out = []
        for n, value in enumerate(values):
            entry = CorpusEntry(Sample(args=(torch.full((3,), float(value)),)), (0, (("gaussian", n),)))
            if selector.measures(entry):
                out.append(n)
            selector.observe(entry, "pass", None)
        return out

    # Nothing is ever novel (one value): intervals 2, 4, 8, 8, ... (the cap).
    stale = CoverageSelector(threshold=0.1, measure_first=0, measure_every=2, measure_every_max=8)
    assert measured_ordinals(stale, [1.0] * 40) == [0, 2, 6, 14, 22, 30, 38]
    # Every measured input is novel (a new value each time): the interval stays at its base.
    fresh = CoverageSelector(threshold=0.1, measure_first=0, measure_every=2, measure_every_max=8)
    assert measured_ordinals(fresh, range(40)) == list(range(0, 40, 2))
    # Novelty after a stale stretch brings the base interval back at once.
    mixed = CoverageSelector(threshold=0.1, measure_first=0, measure_every=2, measure_every_max=8)
    values = [1.0] * 23 + list(range(100, 117))  # stale until 22, novel from 23 on
    assert measured_ordinals(mixed, values) == [0, 2, 6, 14, 22, 30, 32, 34, 36, 38]
    assert mixed.stats()["measure_interval"] == 2


def test_the_campaign_enters_the_op_scope_only_around_measured_inputs() -> None:
    class Counting(CoverageSelector):
        scoped: list[int]
        answered: list[bool]

        def measures(self, entry):  # type: ignore[no-untyped-def]
            self.answered.append(super().measures(entry))
            return self.answered[-1]

        def op_scope(self):  # type: ignore[no-untyped-def]
            self.scoped.append(len(recorded) - 1)  # the input now running (its recipe was just recorded)
            return super().op_scope()

    recorded: list[dict] = []
    selector = Counting(measure_first=64, measure_every=16)
    selector.scoped, selector.answered = [], []
    campaign = Campaign(HarnessSpec(api="torch.add", test_mode="variant:method", seed=3), selector=selector,
                        progress=recorded.append, instrument="op")
    campaign.prepare()
    campaign.run(budget_s=None, max_executions=600)
    tally = campaign.tally  # every input is still run and compared, unless the reference rejects it
    assert tally.executions == 600 and tally.compared + tally.invalid_input == 600 and tally.compared > 500
    assert len(selector.answered) == len(recorded) == 600
    measured = {i for i, answer in enumerate(selector.answered) if answer}
    assert set(selector.scoped) == measured
    mutants = [i for i, recipe in enumerate(recorded) if recipe["steps"]]
    seeds = set(range(600)) - set(mutants)
    assert seeds <= measured and set(mutants[:64]) <= measured  # every seed, the first 64 mutants
    later = len(measured & set(mutants[64:]))
    assert 1 <= later <= len(range(64, len(mutants), 16))  # then at most one in 16: far fewer than every input
    # inputs the reference rejected were scoped but are not coverage (observe ignores them)
    assert len(measured) - tally.invalid_input <= selector.stats()["measured"] <= len(measured)
    assert selector.stats()["mutants"] == len(mutants)
