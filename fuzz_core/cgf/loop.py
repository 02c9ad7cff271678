"""The coverage-guided fuzz loop (TensorFuzz's algorithm) and its random-search baseline."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from fuzz_core.cgf.corpus import Corpus, CorpusElement
from fuzz_core.cgf.mutations import GaussianMutation, InputDomain, Mutation
from fuzz_core.cgf.samplers import get_sampler
from fuzz_core.cgf.target import FuzzTarget
from fuzz_core.coverage.ann import AnnCoverage


@dataclass
class CgfConfig:
    max_mutations: int = 10_000  # mutated inputs executed, the budget both searches share
    mutations_per_item: int = 100  # batch of mutants made from one sampled parent
    threshold: float = 0.5  # ANN novelty threshold (squared L2)
    sampler: str = "recent"
    domain: InputDomain = field(default_factory=InputDomain)
    mutation: Mutation = field(default_factory=GaussianMutation)
    time_budget_s: float | None = None
    # A hit is re-executed alone this many times and must repeat (TensorFuzz re-ran 10×): a
    # nondeterministic or batch-dependent disagreement is not a finding.
    confirm_runs: int = 2
    seed: int = 0


@dataclass
class CgfResult:
    method: str  # "cgf" or "random"
    found: bool
    mutations_to_first: int | None
    executions: int
    iterations: int
    corpus_size: int
    elapsed_s: float
    stop_reason: str  # objective | budget | time
    failing_input: torch.Tensor | None = None
    failing_seed_index: int | None = None
    generations: int | None = None  # mutation steps from the seed to the failing input
    spurious: int = 0  # hits that did not repeat on re-execution

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "found": self.found,
            "mutations_to_first": self.mutations_to_first,
            "executions": self.executions,
            "iterations": self.iterations,
            "corpus_size": self.corpus_size,
            "elapsed_s": round(self.elapsed_s, 4),
            "stop_reason": self.stop_reason,
            "failing_seed_index": self.failing_seed_index,
            "generations": self.generations,
            "spurious": self.spurious,
        }


def _confirmed(target: FuzzTarget, batch: torch.Tensor, row: int, runs: int) -> bool:
    """The hit repeats when its input runs alone, `runs` times.

    Alone, because some modes make a row's result depend on its batch-mates (dynamic
    quantisation scales by the whole batch's range; kernels pick blockings by batch size):
    a finding must reproduce from the one input it reports.
    """
    single = batch[row:row + 1]
    return all(bool(target.fetch(single).hits[0]) for _ in range(runs))


class _Search:
    """State shared by both searches: budget, clock, hit handling."""

    def __init__(self, method: str, target: FuzzTarget, config: CgfConfig) -> None:
        self.method, self.target, self.config = method, target, config
        self.rng = np.random.default_rng(config.seed)
        self.start = time.perf_counter()
        self.mutations = 0
        self.iterations = 0
        self.spurious = 0

    def out_of_time(self) -> bool:
        return self.config.time_budget_s is not None and time.perf_counter() - self.start > self.config.time_budget_s

    def result(self, corpus_size: int, stop: str, hit: CorpusElement | None = None,
               mutations_to_first: int | None = None) -> CgfResult:
        seed_index = generations = None
        if hit is not None:
            root, generations = hit.oldest_ancestor()
            seed_index = root.metadata.get("seed_index")
        return CgfResult(
            method=self.method, found=hit is not None, mutations_to_first=mutations_to_first,
            executions=self.mutations, iterations=self.iterations, corpus_size=corpus_size,
            elapsed_s=time.perf_counter() - self.start, stop_reason=stop,
            failing_input=None if hit is None else hit.data.clone(), failing_seed_index=seed_index,
            generations=generations, spurious=self.spurious,
        )

    def seed_elements(self, seeds: torch.Tensor) -> tuple[list[CorpusElement], CorpusElement | None]:
        fetch = self.target.fetch(seeds)
        elements = [CorpusElement(seeds[i].clone(), fetch.coverage[i], metadata={"seed_index": i})
                    for i in range(seeds.shape[0])]
        for i, hit in enumerate(fetch.hits):
            if hit and _confirmed(self.target, seeds, i, self.config.confirm_runs):
                return elements, elements[i]
        return elements, None

    def run_batch(self, parent: CorpusElement) -> tuple[torch.Tensor, np.ndarray, np.ndarray, int]:
        count = min(self.config.mutations_per_item, self.config.max_mutations - self.mutations)
        batch = self.config.mutation(parent, count, self.rng, self.config.domain)
        fetch = self.target.fetch(batch)
        self.iterations += 1
        return batch, fetch.coverage, fetch.hits, count

    def first_confirmed_hit(self, batch: torch.Tensor, hits: np.ndarray) -> int | None:
        for row in np.flatnonzero(hits):
            if _confirmed(self.target, batch, int(row), self.config.confirm_runs):
                return int(row)
            self.spurious += 1
        return None


def run_cgf(target: FuzzTarget, seeds: torch.Tensor, config: CgfConfig) -> CgfResult:
    """Coverage-guided search from `seeds` ([N, *input shape]) until the objective is met.

    Each iteration samples a parent from the corpus, executes a batch of its mutants, stops
    at the first confirmed hit, and adds every mutant whose coverage vector is farther than
    the threshold from all stored ones.
    """
    search = _Search("cgf", target, config)
    sampler = get_sampler(config.sampler)
    corpus = Corpus(AnnCoverage(config.threshold))
    elements, hit = search.seed_elements(seeds)
    for element in elements:
        corpus.add_seed(element)
    if hit is not None:
        return search.result(len(corpus), "objective", hit, 0)
    while search.mutations < config.max_mutations:
        if search.out_of_time():
            return search.result(len(corpus), "time")
        parent = sampler(corpus.elements, search.rng)
        batch, coverage, hits, count = search.run_batch(parent)
        row = search.first_confirmed_hit(batch, hits)
        if row is not None:
            search.mutations += row + 1
            return search.result(len(corpus), "objective", CorpusElement(batch[row], coverage[row], parent),
                                 search.mutations)
        search.mutations += count
        for i in range(count):
            corpus.maybe_add(CorpusElement(batch[i].clone(), coverage[i], parent))
    return search.result(len(corpus), "budget")


def run_random(target: FuzzTarget, seeds: torch.Tensor, config: CgfConfig) -> CgfResult:
    """The baseline: the same mutations and budget, always applied to a seed, no corpus."""
    search = _Search("random", target, config)
    elements, hit = search.seed_elements(seeds)
    if hit is not None:
        return search.result(len(elements), "objective", hit, 0)
    while search.mutations < config.max_mutations:
        if search.out_of_time():
            return search.result(len(elements), "time")
        parent = elements[int(search.rng.integers(len(elements)))]
        batch, coverage, hits, count = search.run_batch(parent)
        row = search.first_confirmed_hit(batch, hits)
        if row is not None:
            search.mutations += row + 1
            return search.result(len(elements), "objective", CorpusElement(batch[row], coverage[row], parent),
                                 search.mutations)
        search.mutations += count
    return search.result(len(elements), "budget")
