"""The mutator and corpus-selector protocols: the seams where mutation plugins and coverage guidance plug in."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

import torch

from fuzz_core.inputs import Sample


_DRAW = torch.empty(1, dtype=torch.int64)  # reused by randbelow: no tensor allocated per draw


def randbelow(n: int, gen: torch.Generator) -> int:
    """An int in [0, n) drawn from `gen`: the same draw, and the same generator state after it, as
    `int(torch.randint(0, n, (1,), generator=gen))` (which is `empty(1).random_(0, n)`), without the allocation
    (Note [The hot loop] in fuzz_core/campaign.py). For n == 1 the draw is still made (the state after it is
    randint's) but not read: it can only be 0."""
    if n == 1:
        _DRAW.random_(0, 1, generator=gen)
        return 0
    return _DRAW.random_(0, n, generator=gen).item()


_PAIR = torch.empty(2, dtype=torch.int64)
# Below this range `random_(0, n)` is one 32-bit draw's remainder by n (tests/fuzz_core/test_hot_loop_draws.py).
ONE_DRAW_RANGE = 1 << 28


def randbelow_pair(n: int, m: int, gen: torch.Generator) -> tuple[int, int] | None:
    """(randbelow(n, gen), randbelow(m, gen)) in one call, the same draws and the same state after: two draws
    `random_(0, L)` with L a common multiple of n and m are the two 32-bit draws' remainders by L, whose
    remainders by n and by m are randbelow's. None where L is too large for that (then draw them one by one)."""
    bound = math.lcm(n, m)
    if bound >= ONE_DRAW_RANGE:
        return None
    first, second = _PAIR.random_(0, bound, generator=gen).tolist()
    return first % n, second % m


class DrawStream(torch.Generator):
    """The campaign's generator: a torch.Generator (selectors and mutators may draw from it as from any), which also
    hands out uniform draws made BLOCK at a time, so the per-input choices (the parent, the mutator) cost a list pop
    instead of a generator call each (Note [The hot loop] in fuzz_core/campaign.py). Deterministic: the same seed
    gives the same draws, however they are interleaved with the generator's own use, as long as that use is too."""

    BLOCK = 256

    def __new__(cls, seed: int) -> DrawStream:  # torch.Generator.__new__ takes a device, not a seed
        return super().__new__(cls)

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.manual_seed(seed)
        self._block = torch.empty(self.BLOCK, dtype=torch.float64)
        self._left: list[float] = []

    def uniform(self) -> float:
        """A float64 draw in [0, 1)."""
        if not self._left:
            self._left = self._block.uniform_(generator=self).tolist()
            self._left.reverse()
        return self._left.pop()

    def below(self, n: int) -> int:
        """An int in [0, n), each equally likely (to within 2**-53 for n below 2**53)."""
        return min(int(self.uniform() * n), n - 1)


@runtime_checkable
class Mutator(Protocol):
    """Derives a new input from one corpus entry; deterministic given `gen` (so a crash input can be replayed).

    An optional `weight` attribute (default 1.0) sets how often the campaign picks it. A mutator may also make
    `burst` children at once, `mutate_burst(sample, gen) -> list[Sample] | None`, deterministic given `gen`
    (Note [Mutation bursts] in fuzz_core/mutators/builtin.py).
    """

    name: str

    def mutate(self, sample: Sample, gen: torch.Generator) -> Sample | None: ...


@dataclass
class CorpusEntry:
    """A corpus input and the recipe that rebuilds it: seed index plus (mutator, seed) steps, or (mutator, seed,
    row) for a child of a burst (Note [Mutation bursts] in fuzz_core/mutators/builtin.py)."""

    sample: Sample
    recipe: tuple[int, tuple[tuple[Any, ...], ...]]
    picked: int = 0
    meta: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class CorpusSelector(Protocol):
    """Chooses which corpus entry to mutate next and may learn from outcomes.

    `observe` gets every executed input with its outcome ("pass", "noise", "fail", "skip", "na") and
    the (reference output, test output) pair (None where a mode did not run);
    returning True asks the campaign to add the input to the corpus (coverage guidance says yes to novel ones).
    """

    def select(self, corpus: Sequence[CorpusEntry], gen: torch.Generator) -> int: ...

    def observe(self, entry: CorpusEntry, outcome: str, outputs: Any) -> bool: ...


class UniformSelector:
    """Every corpus entry equally likely; never grows the corpus."""

    def select(self, corpus: Sequence[CorpusEntry], gen: torch.Generator) -> int:
        if type(gen) is DrawStream:
            return gen.below(len(corpus))
        return randbelow(len(corpus), gen)

    def observe(self, entry: CorpusEntry, outcome: str, outputs: Any) -> bool:
        return False
