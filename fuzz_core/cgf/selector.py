"""Coverage guidance for the API campaign: a CorpusSelector that keeps novel inputs.

The campaign (fuzz_core/campaign.py) asks its selector which corpus entry to mutate next and
tells it every executed input's outcome; the selector answers whether the input joins the
corpus. This one follows TensorFuzz: recency-biased selection, and an input joins when its
feature vector is farther than `threshold` from every stored one (ANN novelty), or — when the
campaign runs executions inside `op_scope()` — when it reached an (ATen op, dtype, layout)
triple never reached before.

Note [Sampled coverage]
Measuring an input (features of its outputs, a nearest-neighbour query, an op-level dispatch scope around
its runs) costs several times the differential check itself on small ops (about 0.4 ms against 0.05 ms for
sigmoid on 8x8). So the selector measures every seed, the first `measure_first` mutants, and then one mutant
in `interval`, which starts at `measure_every` and doubles (up to `measure_every_max`) each time a measured
mutant brings nothing new, and falls back to `measure_every` when one does: measuring goes on at the base rate
while it pays and fades once the coverage has saturated. The others are checked exactly as before but never
join the corpus. The campaign asks `measures(entry)` before running an input and enters `op_scope` only for
measured ones. Verdicts do not depend on it: every input is still compared.
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
from fuzz_core.mutators.base import DrawStream, randbelow, randbelow_pair

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
    measure_first: int = 64  # Note [Sampled coverage]
    measure_every: int = 16  # the base interval past the first mutants
    measure_every_max: int = 256  # the interval doubles up to this while measured mutants bring nothing new
    indices: dict[int, AnnCoverage] = field(default_factory=dict)
    ops: OpCoverage = field(default_factory=OpCoverage)
    added_for_features: int = 0
    added_for_ops: int = 0
    mutants_seen: int = 0  # mutants the campaign asked about
    measured: int = 0  # inputs (seeds and mutants) whose features were measured
    _ops_pending: set[OpKey] = field(default_factory=set)
    _measuring: bool = True
    _interval: int = 0  # the current interval (0: not started, i.e. measure_every)
    _countdown: int = 0  # unmeasured mutants left before the next measured one

    def select(self, corpus: Sequence[Any], gen: torch.Generator) -> int:
        """Uniform among the newest `recent` entries plus one entry drawn from the whole corpus."""
        n = len(corpus)
        newest = min(self.recent, n)  # the pool: indices n - newest .. n - 1, then `anywhere`
        if type(gen) is DrawStream:  # the campaign's buffered draws: `anywhere` drawn only when it is picked
            pick = gen.below(newest + 1)
            return n - newest + pick if pick < newest else gen.below(n)
        both = randbelow_pair(n, newest + 1, gen)  # randbelow(n), then randbelow(newest + 1), in one call
        if both is None:
            anywhere = randbelow(n, gen)
            pick = randbelow(newest + 1, gen)
        else:
            anywhere, pick = both
        return n - newest + pick if pick < newest else anywhere

    def measures(self, entry: Any) -> bool:
        """Whether this input will be measured (Note [Sampled coverage]); the campaign asks before running it."""
        if not entry.recipe[1]:
            self._measuring = True
            return True
        n = self.mutants_seen
        self.mutants_seen += 1
        if n < self.measure_first:
            self._measuring = True
        elif self._countdown == 0:
            self._measuring = True
            self._countdown = (self._interval or self.measure_every) - 1
        else:
            self._measuring = False
            self._countdown -= 1
        return self._measuring

    def _paid(self, novel: bool) -> None:
        """A measured mutant brought something new (back to the base interval) or nothing (the interval doubles)."""
        if novel:
            self._interval = self.measure_every
            self._countdown = min(self._countdown, self._interval - 1)
        else:  # the next measured mutant moves out at once, by the interval's growth
            old = self._interval or self.measure_every
            self._interval = min(2 * old, max(self.measure_every_max, self.measure_every))
            self._countdown += self._interval - old

    @contextlib.contextmanager
    def op_scope(self) -> Iterator[OpCoverage]:
        """Wrap one input's execution to feed the op-level signal to the next `observe`."""
        before = set(self.ops.seen)
        with self.ops:
            yield self.ops
        self._ops_pending |= self.ops.seen - before

    def observe(self, entry: Any, outcome: str, outputs: Any) -> bool:
        new_ops = self._ops_pending
        if new_ops:  # (an unmeasured input has none: no set made per input)
            self._ops_pending = set()
        measuring, self._measuring = self._measuring, True
        if outcome in _UNINFORMATIVE or not measuring:
            return False
        self.measured += 1
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
        elif new_ops:
            index.add(features)
            self.added_for_ops += 1
        else:
            self._paid(False)
            return False
        self._paid(True)
        return True

    def stats(self) -> dict:
        return {"feature_additions": self.added_for_features, "op_additions": self.added_for_ops,
                "op_triples": len(self.ops.seen), "measured": self.measured, "mutants": self.mutants_seen,
                "measure_interval": self._interval or self.measure_every,
                "indexed": int(sum(len(i) for i in self.indices.values()))}
