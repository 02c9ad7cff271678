"""Maintainer verdicts in an issue's comments: confirmed as a bug, or closed as a known false alarm.

Note [Verdicts in comments]
Comments ingested with ``--comments`` often settle what the report alone cannot: "reproduced,
fix is up" makes a report a silent bug whatever its wording, and "expected behaviour, call
.eval() before tracing" names the false-alarm class of research/false_alarms.md. A negated
phrase ("that is not expected behaviour") is a confirmation, not a dismissal. Each pattern is a
flat alternation of words (Note [Linear-time patterns on issue text] in text.py), and the
comments are read one by one so a confirmation and a dismissal in different comments are both seen.

Note [The tracker's own verdict]
Most real silent bugs are closed because they were fixed, and the tracker says so in ways that do
not depend on anyone's wording: a comment that points at the fix ("fixed by #123", a pull request
or commit that fixes it, "the fix was merged"), GitHub's ``state_reason`` (``completed`` /
``not_planned``) when the record has it, and the labels maintainers put on a report
(``high priority``, a regression label, ``actionable``). ``tracker_verdict`` folds
these with the comment verdict: a fix reference or a confirming label makes the report a confirmed
bug; ``not_planned``, a dismissing label or a dismissal in someone else's comment makes it "not a
bug" unless something confirms it. A plain "closed" says neither: not-a-bug reports are closed too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CONFIRMED = re.compile(
    r"\b(?:confirmed|reproduced|i can reproduce|can repro|real bug|is a bug|(?:a|the) fix (?:is up|landed)|"
    r"landed a fix|fixed (?:by|in|now)|will be fixed|we'll fix|will fix|(?:this|it) (?:has been|was|is now) fixed|"
    # a maintainer's reading of the report ("this looks like a PyTorch bug"), not of the user's code
    r"(?:looks|seems) (?:like|to be) (?:a|an) (?:pytorch |real |genuine |actual )?bug(?! in (?:your|the user'?s?|user) )|"
    r"(?:is|this is) indeed a bug)\b"
)
_NEGATED_DISMISSAL = re.compile(r"\bnot (?:the )?expected behaviou?r\b|\bnot working as intended\b")
_DISMISSED = re.compile(
    r"\bnot a (?:pytorch )?bug\b|\bexpected behaviou?r\b|\bworking as intended\b|\bworks as (?:intended|expected)\b|"
    r"\bby design\b|\bnot user[- ]facing\b|\bis documented\b|\bdocumented:|\bnot an? (?:real |actual )?(?:issue|problem)\b|"
    r"\bnot a real bug\b|\b(?:this|that|it|which|differences?|results?) (?:is|are) expected\b|"
    r"\b(?:are|is) (?:all |both |each )?valid (?:outputs?|results?|answers?)\b|\b(?:outputs?|results?|answers?) (?:you posted |you got |here )?(?:are|is) (?:all |both )?valid\b|"
    # a usage question sent to the forums, the tracker's way of closing one
    r"\bplease (?:use|ask (?:on|in|at)|post (?:it )?(?:on|in|to)) (?:https?://)?(?:discuss\.pytorch\.org|the (?:discussion )?forums?)\b|"
    r"\b(?:discuss\.pytorch\.org|the forums?) (?:is|are) (?:the (?:right |better )?place )?for (?:usage )?questions\b"
)
# A comment that points at the fix of the report: a pull request, a commit, a merged or landed fix.
_FIX_REFERENCE = re.compile(
    r"\b(?:fixed|resolved|addressed|closed|completed) (?:by|in|with|via) (?:#\d|https?://|pr\b|pull request\b|commit\b|"
    r"[0-9a-f]{7,40}\b)|\b(?:pr|pull request) #?\d+ (?:fixes|fixed|resolves|resolved|should fix)\b|"
    r"\b(?:the|a) fix (?:is|was|has been|got) (?:merged|landed|in)\b|\b(?:sent|submitted|opened|put up) a (?:fix|pr|pull request)\b|"
    r"\bfix(?:ed)? (?:is |has been )?(?:merged|landed)\b|\b(?:pr|pull request) (?:to fix|that fixes|fixing)\b|"
    r"\bshould be fixed (?:by|in|on) (?:#\d|https?://|main|master|nightly|the nightly)"
)
# Float-noise explanations; the class (low_precision or bitwise_comparison) depends on the dtypes.
FLOAT_NOISE = "float_noise"
_FLOAT_NOISE_WORDS = re.compile(
    r"\bnumerical[_ ]accuracy\b|\bfloating[- ]point (?:error|noise|precision|rounding|arithmetic|numbers?)\b|"
    r"\brounding (?:error|noise)s?\b|\bnumerical (?:noise|precision|error)s?\b|\bnon-?associativ"
)
# ``module: correctness (silent)`` says what kind of report it is (TextSignals.silent_label), not that it was
# confirmed: triagers put it on reports before they are ruled on, and the false-alarm rules still apply.
CONFIRMING_LABELS: tuple[str, ...] = (
    "high priority", "topic: regression", "module: regression", "regression", "actionable",
)
DISMISSING_LABELS: tuple[str, ...] = (
    "not a bug", "invalid", "wontfix", "won't fix", "working as intended", "expected behavior", "expected behaviour",
)
# (class, words a maintainer uses when explaining it), checked in this order
_CLASS_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("train_mode_tracing", re.compile(r"\.eval\(\)|\btrain(?:ing)? mode\b|\bdropout is (?:active|random)\b")),
    ("random_ops", re.compile(r"\bfallback_random\b|\brng\b|\brandom numbers\b")),
    ("duplicate_indices", re.compile(r"\bduplicate ind(?:ices|exes)\b|\bwhich write wins\b")),
    ("ties", re.compile(r"\btied\b|\bties\b|\bequal values\b")),
    ("out_of_domain", re.compile(r"\bnot (?:a )?user[- ]facing\b|\binvalid argument\b|\bnegative (?:kernel|stride|size)")),
    ("ieee_nan", re.compile(r"\bieee\b|\blog of a negative\b|\bnegative base\b|\bis nan in\b")),
    # the compiled side nearer the float64 answer: PyTorch's own rule (same(..., fp64_ref=...)) says eager is off
    ("bitwise_comparison", re.compile(r"\bbitwise\b|\b(?:accumulation|different) order\b|\bdifferent kernels\b|"
                                      r"\bdefault tolerances\b|\bmore accurate than eager\b|"
                                      r"\bcloser to (?:the )?(?:fp64|float64|double)\b|\beager is (?:the )?less accurate\b")),
    ("low_precision", re.compile(r"\bulp\b|\bwhat fp16 gives\b|\bhalf precision\b|\bprecision of (?:fp16|bf16)\b|"
                                 r"\bsingle precision\b")),
    (FLOAT_NOISE, _FLOAT_NOISE_WORDS),
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
        if not comment.strip():  # an empty comment says nothing (and costs a pass of every pattern)
            continue
        text = comment.lower()
        negated = bool(_NEGATED_DISMISSAL.search(text))
        if _CONFIRMED.search(text) or _FIX_REFERENCE.search(text) or negated:
            confirmed = True
            continue
        says_expected = bool(_DISMISSED.search(text))
        dismissed |= says_expected
        if named is None:
            named = next((name for name, words in _CLASS_WORDS if words.search(text)), None)
            # float-noise words also describe real bugs ("a numerical error in the kernel"): they name a class
            # only beside a dismissal or a pointer to the numerical-accuracy notes
            if named == FLOAT_NOISE and not (says_expected or "numerical_accuracy" in text or "numerical accuracy" in text):
                named = None
    if confirmed:
        return CommentVerdict(confirmed=True)
    # the class words are specific enough (fallback_random, which write wins) to count as a dismissal
    return CommentVerdict(dismissed=dismissed or named is not None, false_alarm_class=named)


@dataclass(frozen=True)
class TrackerVerdict:
    """What the tracker says about a report (Note [The tracker's own verdict]); each field says why."""

    confirmed: str | None = None
    dismissed: str | None = None


def _label_in(labels: list[str], names: tuple[str, ...]) -> str | None:
    low = [label.lower().strip() for label in labels]
    for label in low:
        for name in names:
            if label == name or (" " in name and name in label):
                return label
    return None


def tracker_verdict(comments: CommentVerdict, labels: list[str], state: str | None = None,
                    state_reason: str | None = None) -> TrackerVerdict:
    """Comments, labels and GitHub's close reason folded into one verdict; a confirmation wins."""
    reason = (state_reason or "").lower()
    if comments.confirmed:
        return TrackerVerdict(confirmed="a comment confirms it or points at its fix")
    if reason == "not_planned":
        return TrackerVerdict(dismissed="closed as not planned")
    dismissing = _label_in(labels, DISMISSING_LABELS)
    if dismissing:
        return TrackerVerdict(dismissed=f"labelled {dismissing!r}")
    confirming = _label_in(labels, CONFIRMING_LABELS)
    if confirming:
        return TrackerVerdict(confirmed=f"labelled {confirming!r} by the maintainers")
    if comments.dismissed:
        return TrackerVerdict(dismissed="a comment explains it as expected")
    return TrackerVerdict()
