"""Words for a difference that involves NaN or Inf: which mode gives which class of value, and float64's.

Note [Truthful reasons]: an RMSE over the positions where all three results are finite is 0 when there are
none (an empty var_mean: eager nan, inductor 0), and a maximum absolute difference is inf whenever a NaN is
involved (nan vs -inf). Reasons built from those figures contradict what a reviewer sees in the repro, so
when the disagreement is non-finite the reason names the values instead ("eager gives nan, inductor gives 0,
float64 gives nan").
"""

from __future__ import annotations

from collections import Counter

import torch

# At most this many distinct (reference, test, float64) patterns are spelled out; the rest are counted.
MAX_PATTERNS = 3


def value_word(value: float) -> str:
    """One value as a reviewer reads it: nan, inf, -inf, or the number to 4 significant digits."""
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return f"{value:.4g}"


def class_word(value: float) -> str:
    """The value's class: nan, inf, -inf, or "finite"."""
    word = value_word(value)
    return word if word in ("nan", "inf", "-inf") else "finite"


def nonfinite_disagreements(ref: torch.Tensor, test: torch.Tensor) -> torch.Tensor:
    """Positions where the two results differ and at least one of them is NaN or Inf (equal NaNs agree)."""
    r, t = ref.detach().double(), test.detach().double()
    same_class = (r.isnan() & t.isnan()) | (r == t)
    return ~same_class & ~(torch.isfinite(r) & torch.isfinite(t))


def describe_nonfinite(ref: torch.Tensor, test: torch.Tensor, fp64: torch.Tensor | None, *, ref_name: str,
                       test_name: str, where: torch.Tensor | None = None) -> str:
    """What each mode gives at the non-finite disagreements (or at `where`), grouped by pattern.

    A pattern seen at one position shows the values themselves; one seen at several shows classes
    ("finite" for any finite value). "" when there is no such position."""
    if ref.shape != test.shape:
        return ""
    mask = nonfinite_disagreements(ref, test) if where is None else where
    if not bool(mask.any()):
        return ""
    r = ref.detach().double()[mask].tolist()
    t = test.detach().double()[mask].tolist()
    f = fp64.detach().double()[mask].tolist() if fp64 is not None and fp64.shape == ref.shape else None
    rows = list(zip(r, t, f if f is not None else [None] * len(r)))
    classes = Counter((class_word(a), class_word(b), None if c is None else class_word(c)) for a, b, c in rows)
    parts = []
    for pattern, count in classes.most_common(MAX_PATTERNS):
        if count == 1:
            a, b, c = next(row for row in rows if (class_word(row[0]), class_word(row[1]),
                                                   None if row[2] is None else class_word(row[2])) == pattern)
            words = (value_word(a), value_word(b), None if c is None else value_word(c))
        else:
            words = tuple(None if w is None else ("finite values" if w == "finite" else w) for w in pattern)
        text = f"{ref_name} gives {words[0]}, {test_name} gives {words[1]}"
        if words[2] is not None:
            text += f", float64 gives {words[2]}"
        parts.append(f"{text} (at {count} element{'s' if count != 1 else ''})")
    rest = sum(classes.values()) - sum(count for _, count in classes.most_common(MAX_PATTERNS))
    if rest:
        parts.append(f"{rest} more element{'s' if rest != 1 else ''} in other patterns")
    return "; ".join(parts)
