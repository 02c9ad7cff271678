"""Maintainer verdicts in an issue's comments: confirmed as a bug, or closed as a known false alarm.

Note [Verdicts in comments]
Comments ingested with ``--comments`` often settle what the report alone cannot: "reproduced,
fix is up" makes a report a silent bug whatever its wording, and "expected behaviour, call
.eval() before tracing" names the false-alarm class of research/false_alarms.md. A negated
phrase ("that is not expected behaviour") is a confirmation, not a dismissal. Each pattern is a
flat alternation of words (Note [Linear-time patterns on issue text] in text.py), and the
comments are read one by one so a confirmation and a dismissal in different comments are both seen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CONFIRMED = re.compile(
    r"\b(?:confirmed|reproduced|i can reproduce|can repro|real bug|is a bug|(?:a|the) fix (?:is up|landed)|"
    r"landed a fix|fixed (?:by|in|now)|will be fixed|we'll fix|will fix)\b"
)
_NEGATED_DISMISSAL = re.compile(r"\bnot (?:the )?expected behaviou?r\b|\bnot working as intended\b")
_DISMISSED = re.compile(
    r"\bnot a (?:pytorch )?bug\b|\bexpected behaviou?r\b|\bworking as intended\b|\bworks as (?:intended|expected)\b|"
    r"\bby design\b|\bnot user[- ]facing\b|\bis documented\b|\bdocumented:"
)
# (class, words a maintainer uses when explaining it), checked in this order
_CLASS_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("train_mode_tracing", re.compile(r"\.eval\(\)|\btrain(?:ing)? mode\b|\bdropout is (?:active|random)\b")),
    ("random_ops", re.compile(r"\bfallback_random\b|\brng\b|\brandom numbers\b")),
    ("duplicate_indices", re.compile(r"\bduplicate ind(?:ices|exes)\b|\bwhich write wins\b")),
    ("ties", re.compile(r"\btied\b|\bties\b|\bequal values\b")),
    ("out_of_domain", re.compile(r"\bnot (?:a )?user[- ]facing\b|\binvalid argument\b|\bnegative (?:kernel|stride|size)")),
    ("ieee_nan", re.compile(r"\bieee\b|\blog of a negative\b|\bnegative base\b|\bis nan in\b")),
    ("bitwise_comparison", re.compile(r"\bbitwise\b|\b(?:accumulation|different) order\b|\bdifferent kernels\b|"
                                      r"\bdefault tolerances\b")),
    ("low_precision", re.compile(r"\bulp\b|\bwhat fp16 gives\b|\bhalf precision\b|\bprecision of (?:fp16|bf16)\b")),
)


@dataclass(frozen=True)
class CommentVerdict:
    confirmed: bool = False  # a maintainer says it is a real bug (reproduced, fixed, will fix)
    dismissed: bool = False  # closed as not a bug / expected behaviour
    false_alarm_class: str | None = None  # the class the dismissal explains, when it names one


def read_verdict(comments: list[str]) -> CommentVerdict:
    """What the comments say about the report; confirmation wins over a dismissal elsewhere."""
    confirmed = dismissed = False
    named: str | None = None
    for comment in comments:
        text = comment.lower()
        negated = bool(_NEGATED_DISMISSAL.search(text))
        if _CONFIRMED.search(text) or negated:
            confirmed = True
            continue
        if _DISMISSED.search(text):
            dismissed = True
        if named is None:
            named = next((name for name, words in _CLASS_WORDS if words.search(text)), None)
    if confirmed:
        return CommentVerdict(confirmed=True)
    # the class words are specific enough (fallback_random, which write wins) to count as a dismissal
    return CommentVerdict(dismissed=dismissed or named is not None, false_alarm_class=named)
