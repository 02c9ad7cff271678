"""Shrink a failing input while it keeps failing: fewer elements and dimensions, simpler values, default arguments.

Note [Shrinking failing inputs]: the model is Hypothesis's shrinker, whose ideas carry over while
its machinery does not (Hypothesis shrinks the choice sequence of its own strategies; our failing
input comes from OpInfo samples and mutators, with no choice sequence behind it). What we keep:
- a total order on inputs ("simpler"), here (elements, dimensions, value complexity, kwargs), and
  a candidate is accepted only when it is strictly simpler AND the predicate still says "fails",
  so the result is never worse than the start and the loop always ends;
- passes ordered from the largest cut to the smallest (drop a whole kwarg, keep one element of a
  dimension, halve a dimension, then simplify every value at once, then one value at a time);
- restart from the first pass after any success (a smaller tensor makes the big cuts cheap again);
- a budget in time and predicate calls, with the reason the shrink stopped recorded.
The predicate is the full confirmation check (Campaign.evaluate), so "still fails" means "still
confirmed with the same failure key", never merely "still different".
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterator

import torch

from fuzz_core.inputs import Sample
from fuzz_core.tensors import map_tensors, tensor_leaves

EXIT_FIXPOINT = "no simpler failing input"
EXIT_BUDGET = "time budget"
EXIT_TRIES = "predicate-call budget"


@dataclass
class ShrinkStats:
    """What the shrink achieved, for the evidence and the run notes."""

    elements_before: int
    elements_after: int
    dims_before: int
    dims_after: int
    tries: int
    accepted: int
    elapsed_s: float
    exit_reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _value_complexity(value: float) -> int:
    """0 for 0, 1 for small integers, then longer decimals cost more; non-finite values are special but simple."""
    if not math.isfinite(value):
        return 2
    if value == 0:
        return 0
    if value == int(value) and abs(value) < 1000:
        return 1 + (value < 0) + int(abs(value)).bit_length()  # smaller magnitudes are simpler
    text = repr(value).lstrip("-")
    return 12 + len(text)  # any decimal is less simple than an integer below 1000


def _tensor_complexity(t: torch.Tensor) -> int:
    if t.numel() == 0 or not (t.is_floating_point() or t.dtype in (torch.int8, torch.int16, torch.int32, torch.int64,
                                                                    torch.uint8)):
        return 0
    return sum(_value_complexity(float(v)) for v in t.detach().reshape(-1).double().tolist())


def size_key(sample: Sample) -> tuple[int, int, int, int, int, int]:
    """The order shrinking descends: elements, dimensions, extents (so an empty (5, 5, 0) tensor still
    shrinks to (0,)), non-contiguous tensors, value complexity, kwargs."""
    leaves = tensor_leaves(sample.tree())
    return (sum(t.numel() for t in leaves), sum(t.dim() for t in leaves), sum(sum(t.shape) for t in leaves),
            sum(0 if t.is_contiguous() else 1 for t in leaves), sum(_tensor_complexity(t) for t in leaves),
            len(sample.kwargs))


def _replace_leaf(sample: Sample, index: int, new: torch.Tensor) -> Sample:
    counter = iter(range(1 << 30))
    return sample.with_tree(map_tensors(sample.tree(), lambda t: new if next(counter) == index else t))


def _replace_all(sample: Sample, fn: Callable[[torch.Tensor], torch.Tensor]) -> Sample:
    return sample.with_tree(map_tensors(sample.tree(), fn))


def _slices(size: int) -> Iterator[slice]:
    """Largest cut first: one element (first, last), then halves."""
    yield slice(0, 1)
    yield slice(size - 1, size)
    if size > 3:
        yield slice(0, size // 2)
        yield slice(size // 2, size)
    if size > 2:
        yield slice(0, size - 1)


def _structure_candidates(sample: Sample) -> Iterator[Sample]:
    for key in list(sample.kwargs):  # default arguments: drop a keyword argument
        yield Sample(sample.args, {k: v for k, v in sample.kwargs.items() if k != key}, sample.ctor, sample.origin)
    leaves = tensor_leaves(sample.tree())
    for index, t in enumerate(leaves):
        if not t.is_contiguous():
            yield _replace_leaf(sample, index, t.contiguous())
    shapes = {tuple(t.shape) for t in leaves}
    if len(leaves) > 1 and len(shapes) == 1:  # same-shape tensors (elementwise ops): cut them together
        shape = next(iter(shapes))
        for dim, size in enumerate(shape):
            for cut in (_slices(size) if size > 1 else ()):
                yield _replace_all(sample, lambda t, d=dim, c=cut: t.narrow(d, c.start, c.stop - c.start).clone())
    for index, t in enumerate(leaves):
        for dim, size in enumerate(t.shape):
            for cut in (_slices(size) if size > 1 else ()):
                yield _replace_leaf(sample, index, t.narrow(dim, cut.start, cut.stop - cut.start).clone())
        for dim, size in enumerate(t.shape):  # a dimension of size 1 can go
            if size == 1:
                yield _replace_leaf(sample, index, t.squeeze(dim).clone())


def _simpler_values(t: torch.Tensor) -> Iterator[torch.Tensor]:
    """Whole-tensor simplifications: zeros, ones, integers, then fewer significant digits."""
    if t.numel() == 0 or t.dtype == torch.bool or t.is_complex():
        return
    yield torch.zeros_like(t)
    yield torch.ones_like(t)
    if t.is_floating_point():
        finite = torch.isfinite(t)
        yield torch.where(finite, t.round(), t)
        for digits in (1, 2, 3):
            scale = 10.0 ** digits
            yield torch.where(finite, (t.double() * scale).round().div(scale).to(t.dtype), t)


def _element_values(value: float, is_float: bool) -> Iterator[float]:
    yield 0.0
    yield 1.0
    if math.isfinite(value) and abs(value) > 1:
        yield math.copysign(1.0, value)  # toward zero, as Hypothesis shrinks integers: sign, then halves
        yield float(int(value / 2))
    if is_float and math.isfinite(value):
        yield float(round(value))
        for digits in (1, 2, 3):
            yield round(value, digits)


def _value_candidates(sample: Sample) -> Iterator[Sample]:
    leaves = tensor_leaves(sample.tree())
    for index, t in enumerate(leaves):
        for simpler in _simpler_values(t):
            yield _replace_leaf(sample, index, simpler)
    for index, t in enumerate(leaves):
        if t.numel() == 0 or t.dtype == torch.bool or t.is_complex() or t.numel() > 256:
            continue
        flat = t.detach().reshape(-1)
        for position in range(flat.numel()):
            for value in _element_values(float(flat[position]), t.is_floating_point()):
                changed = flat.clone()
                changed[position] = value
                yield _replace_leaf(sample, index, changed.reshape(t.shape))


def minimise(sample: Sample, still_fails: Callable[[Sample], bool], *, budget_s: float = 30.0,
             max_tries: int = 400, canonical: Callable[[Sample], Sample] | None = None) -> tuple[Sample, ShrinkStats]:
    """The simplest input found that `still_fails`; `sample` itself is assumed to fail (it is not re-checked).

    `canonical` makes a candidate fair to both modes (Campaign.canonical) before it is judged and kept.
    Predicate errors count as "does not fail": the shrink never turns a crash of the check into a finding.
    """
    start = time.monotonic()
    deadline = start + budget_s
    leaves = tensor_leaves(sample.tree())
    before = (sum(t.numel() for t in leaves), sum(t.dim() for t in leaves))
    current, current_key = sample, size_key(sample)
    tries = accepted = 0
    exit_reason = EXIT_FIXPOINT
    seen: set[str] = set()

    def attempt(candidate: Sample) -> bool:
        nonlocal tries
        if canonical is not None:
            candidate = canonical(candidate)
        key = size_key(candidate)
        if key >= current_key:
            return False
        fingerprint = repr(key) + "|" + "|".join(
            f"{t.shape}{t.dtype}{t.detach().reshape(-1)[:64].tolist()}" for t in tensor_leaves(candidate.tree()))
        if fingerprint in seen:
            return False
        seen.add(fingerprint)
        tries += 1
        try:
            return bool(still_fails(candidate))
        except Exception:
            return False

    improved = True
    while improved:
        improved = False
        for passes in (_structure_candidates, _value_candidates):
            for candidate in passes(current):
                if time.monotonic() >= deadline:
                    exit_reason = EXIT_BUDGET
                    break
                if tries >= max_tries:
                    exit_reason = EXIT_TRIES
                    break
                if attempt(candidate):
                    current = canonical(candidate) if canonical is not None else candidate
                    current_key = size_key(current)
                    accepted += 1
                    improved = True
                    break  # restart from the largest cuts
            if improved or exit_reason != EXIT_FIXPOINT:
                break
        if exit_reason != EXIT_FIXPOINT:
            break
    after = tensor_leaves(current.tree())
    stats = ShrinkStats(before[0], sum(t.numel() for t in after), before[1], sum(t.dim() for t in after), tries,
                        accepted, round(time.monotonic() - start, 3), exit_reason)
    return current, stats
