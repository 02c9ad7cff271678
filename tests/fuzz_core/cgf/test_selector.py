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
