"""Coverage guidance for the API campaign: a CorpusSelector that keeps novel inputs.

The campaign (fuzz_core/campaign.py) asks its selector which corpus entry to mutate next and
tells it every executed input's outcome; the selector answers whether the input joins the
corpus. This one follows TensorFuzz: recency-biased selection, and an input joins when its
feature vector is farther than `threshold` from every stored one (ANN novelty), or — when the
campaign runs executions inside `op_scope()` — when it reached an (ATen op, dtype, layout)
triple never reached before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from fuzz_core.coverage.ann import AnnCoverage
from fuzz_core.coverage.features import summary_features
from fuzz_core.coverage.ops import OpCoverage, OpKey

# Outcomes that say nothing about the target's behaviour: the input was rejected or the mode
# did not apply, so it cannot count as new coverage.
_UNINFORMATIVE = ("skip", "na")


@dataclass
class CoverageSelector:
    """Satisfies fuzz_core.mutators.CorpusSelector (select / observe).

    Features are summaries of the outputs when the campaign passes them, otherwise of the
    input itself (input-space novelty). Summaries of different tensor counts get separate
    indices, so a shape-changing mutation never breaks the index.
    """

    threshold: float = 0.1
    recent: int = 5
    indices: dict[int, AnnCoverage] = field(default_factory=dict)
    ops: OpCoverage = field(default_factory=OpCoverage)
    added_for_features: int = 0
    added_for_ops: int = 0
    _ops_pending: set[OpKey] = field(default_factory=set)

    def select(self, corpus: Sequence[Any], gen: torch.Generator) -> int:
        """Uniform among the newest `recent` entries plus one entry drawn from the whole corpus."""
        n = len(corpus)
        pool = list(range(max(0, n - self.recent), n))
        pool.append(int(torch.randint(0, n, (1,), generator=gen)))
        return pool[int(torch.randint(0, len(pool), (1,), generator=gen))]

    @contextlib.contextmanager
    def op_scope(self) -> Iterator[OpCoverage]:
        """Wrap one input's execution to feed the op-level signal to the next `observe`."""
        before = set(self.ops.seen)
        with self.ops:
            yield self.ops
        self._ops_pending |= self.ops.seen - before

    def observe(self, entry: Any, outcome: str, outputs: Any) -> bool:
        new_ops, self._ops_pending = self._ops_pending, set()
        if outcome in _UNINFORMATIVE:
            return False
        source = outputs if outputs is not None else entry.sample.tree()
        features = summary_features(source)
        index = self.indices.setdefault(features.shape[0], AnnCoverage(self.threshold))
        is_seed = not entry.recipe[1]
        if is_seed:
            # Seeds are already in the campaign's corpus: they only seed the index.
            index.add(features)
            return False
        if index.maybe_add(features):
            self.added_for_features += 1
            return True
        if new_ops:
            index.add(features)
            self.added_for_ops += 1
            return True
        return False

    def stats(self) -> dict:
        return {"feature_additions": self.added_for_features, "op_additions": self.added_for_ops,
                "op_triples": len(self.ops.seen),
                "indexed": int(sum(len(i) for i in self.indices.values()))}
