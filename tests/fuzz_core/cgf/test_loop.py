"""The TensorFuzz loop: CGF reaches a planted NaN that random search misses on the same budget."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from fuzz_core.cgf import (
    CgfConfig,
    CorpusElement,
    GaussianMutation,
    InputDomain,
    ModelTarget,
    NanObjective,
    SpecialValueMutation,
    UserObjective,
    recent_sampler,
    run_cgf,
    run_random,
)


class PlantedNan(nn.Module):
    """log(6 - Σx): finite near the origin, NaN once the 16 inputs sum past 6.

    Random search from the origin sums 16 N(0, 0.2²) steps (σ ≈ 0.8): past 6 is a 7.5σ
    event; a search that keeps inputs with new projections walks there.
    """

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 1, bias=False)
        nn.init.ones_(self.proj.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(6.0 - self.proj(x))


def _config(seed: int, budget: int = 3000) -> CgfConfig:
    return CgfConfig(max_mutations=budget, mutations_per_item=20, threshold=0.05,
                     domain=InputDomain(-1.0, 1.0), seed=seed)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cgf_finds_planted_nan_that_random_search_misses(seed: int) -> None:
    model = PlantedNan().eval()
    seeds = torch.zeros(2, 16)
    cgf = run_cgf(ModelTarget(model, NanObjective(), ["proj"]), seeds, _config(seed))
    rnd = run_random(ModelTarget(model, NanObjective(), ["proj"]), seeds, _config(seed))
    assert cgf.found and cgf.stop_reason == "objective"
    assert cgf.mutations_to_first is not None and cgf.mutations_to_first <= 3000
    assert cgf.generations is not None and cgf.generations >= 2  # reached by a chain of mutants
    with torch.no_grad():
        assert torch.isnan(model(cgf.failing_input.unsqueeze(0))).all()
    assert float(cgf.failing_input.abs().max()) <= 1.0  # stayed inside the input domain
    assert not rnd.found and rnd.stop_reason == "budget" and rnd.executions == 3000


def test_same_seed_same_search() -> None:
    model = PlantedNan().eval()
    a = run_cgf(ModelTarget(model, NanObjective(), ["proj"]), torch.zeros(1, 16), _config(5))
    b = run_cgf(ModelTarget(model, NanObjective(), ["proj"]), torch.zeros(1, 16), _config(5))
    assert a.mutations_to_first == b.mutations_to_first and a.corpus_size == b.corpus_size
    assert torch.equal(a.failing_input, b.failing_input)


def test_seed_meeting_the_objective_is_reported_with_zero_mutations() -> None:
    model = PlantedNan().eval()
    result = run_cgf(ModelTarget(model, NanObjective(), ["proj"]), torch.ones(1, 16), _config(0))
    assert result.found and result.mutations_to_first == 0 and result.failing_seed_index == 0


def test_nondeterministic_hits_are_not_findings() -> None:
    flips = np.random.default_rng(0)

    def coin(obs):  # a "disagreement" that does not repeat on re-execution
        return flips.random(obs.batch.shape[0]) < 0.05

    model = PlantedNan().eval()
    config = CgfConfig(max_mutations=400, mutations_per_item=20, threshold=0.05,
                       domain=InputDomain(-0.1, 0.1), seed=0, confirm_runs=3)
    result = run_cgf(ModelTarget(model, UserObjective(coin), ["proj"]), torch.zeros(1, 16), config)
    assert not result.found
    assert result.spurious > 0


def test_clipped_mutation_stays_in_the_ball_around_the_seed() -> None:
    rng = np.random.default_rng(0)
    domain = InputDomain(-1.0, 1.0, constraint=0.3)
    element = CorpusElement(torch.zeros(8) + 0.9, np.zeros(1))
    root = element.data.clone()
    for _ in range(20):  # many generations: noise accumulates but never leaves the ball
        batch = GaussianMutation(sigma=0.5)(element, 10, rng, domain)
        assert float((batch - root).abs().max()) <= 0.3 + 1e-6
        assert float(batch.max()) <= 1.0 and float(batch.min()) >= -1.0
        element = CorpusElement(batch[0], np.zeros(1), parent=element)
    assert element.oldest_ancestor()[1] == 20


def test_integer_inputs_get_integer_mutations() -> None:
    rng = np.random.default_rng(0)
    parent = CorpusElement(torch.tensor([3, 4, 5]), np.zeros(1))
    batch = GaussianMutation(sigma=1.0)(parent, 50, rng, InputDomain(0, 9))
    assert batch.dtype == torch.int64
    assert int(batch.min()) >= 0 and int(batch.max()) <= 9
    assert not torch.equal(batch, parent.data.expand(50, 3))


def test_special_values_respect_the_nonfinite_switch() -> None:
    rng = np.random.default_rng(0)
    parent = CorpusElement(torch.zeros(100), np.zeros(1))
    finite_only = SpecialValueMutation(fraction=0.2)(parent, 20, rng, InputDomain())
    assert torch.isfinite(finite_only).all()
    assert bool((finite_only.abs() > 1e37).any())  # huge values appear
    denormal = (finite_only != 0) & (finite_only.abs() < torch.finfo(torch.float32).smallest_normal)
    assert bool(denormal.any())
    with_nonfinite = SpecialValueMutation(fraction=0.2, allow_nonfinite=True)(parent, 20, rng, InputDomain())
    assert bool(torch.isnan(with_nonfinite).any()) and bool(torch.isinf(with_nonfinite).any())


def test_recent_sampler_prefers_new_elements() -> None:
    rng = np.random.default_rng(0)
    elements = [CorpusElement(torch.tensor([float(i)]), np.zeros(1)) for i in range(100)]
    picks = [int(recent_sampler(elements, rng).data) for _ in range(3000)]
    recent_share = sum(p >= 95 for p in picks) / len(picks)
    assert recent_share > 0.8  # 5 of 6 pool slots are the newest five
    assert len(set(picks)) > 50  # the one uniform slot still reaches old elements


class CentredByBatch(nn.Module):
    """Each row minus the batch mean: a row's output depends on its batch-mates."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x - x.mean(dim=0, keepdim=True)


def test_hits_that_only_exist_inside_a_batch_are_not_findings() -> None:
    def far_from_batch_mean(obs):
        return (obs.output.abs().amax(dim=1) > 0.3).numpy()

    config = CgfConfig(max_mutations=400, mutations_per_item=20, threshold=0.05,
                       domain=InputDomain(-1.0, 1.0), seed=0)
    result = run_cgf(ModelTarget(CentredByBatch(), UserObjective(far_from_batch_mean)),
                     torch.zeros(1, 4), config)
    # In a batch rows differ from the mean; alone, a row is its own mean: never a finding.
    assert not result.found and result.spurious > 0
