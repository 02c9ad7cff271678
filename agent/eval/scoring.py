"""Scores of an extractor against labels: per-class triage precision/recall/F1, confusion, accuracies.

Pure functions over typed records, no I/O. Kind, API and mode accuracy are measured on the
reports labelled ``silent_bug`` (the ones that should yield a pattern): a report the extractor
did not turn into a pattern counts as a miss, so these are end-to-end accuracies, not accuracies
given a pattern. Mode accuracy leaves out reports whose labels name no expressible mode pair.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from agent.eval.labels import TRIAGE_CLASSES, LabelledReport


@dataclass(frozen=True)
class Prediction:
    """What an extractor said about one report."""

    triage: str  # one of TRIAGE_CLASSES
    false_alarm_class: str | None = None
    kind: str | None = None
    api: str | None = None
    modes: tuple[str, str] | None = None
    error: str | None = None  # the extractor failed on this report (counted as its triage/pattern)


@dataclass(frozen=True)
class ClassScore:
    label: str
    support: int  # reports labelled with this class
    predicted: int  # reports predicted as this class
    true_positives: int
    precision: float
    recall: float
    f1: float


@dataclass(frozen=True)
class Accuracy:
    hits: int
    total: int

    @property
    def rate(self) -> float:
        return self.hits / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"hits": self.hits, "total": self.total, "rate": round(self.rate, 4)}


@dataclass
class Miss:
    id: str
    category: str
    expected: str
    got: str


@dataclass
class ExtractionScores:
    reports: int
    triage: list[ClassScore]
    confusion: dict[str, dict[str, int]]  # labelled class -> predicted class -> count
    false_alarm_class: Accuracy  # on reports labelled not_a_bug: the right class named
    kind: Accuracy  # the preferred kind or one of also_kinds
    kind_strict: Accuracy  # the preferred kind only
    api: Accuracy
    modes: Accuracy
    errors: int
    misses: list[Miss] = field(default_factory=list)

    def class_score(self, label: str) -> ClassScore:
        return next(score for score in self.triage if score.label == label)

    def to_dict(self) -> dict[str, Any]:
        return {
            "reports": self.reports,
            "triage": triage_dicts(self.triage),
            "confusion": self.confusion,
            "false_alarm_class": self.false_alarm_class.to_dict(),
            "kind": self.kind.to_dict(),
            "kind_strict": self.kind_strict.to_dict(),
            "api": self.api.to_dict(),
            "modes": self.modes.to_dict(),
            "errors": self.errors,
            "misses": [asdict(m) for m in self.misses],
        }


def triage_dicts(scores: list[ClassScore]) -> list[dict[str, Any]]:
    """Per-class triage scores as JSON, rates rounded."""
    return [{**asdict(s), "precision": round(s.precision, 4), "recall": round(s.recall, 4), "f1": round(s.f1, 4)}
            for s in scores]


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def class_score(label: str, pairs: list[tuple[str, str]]) -> ClassScore:
    """Precision, recall and F1 of one class from (labelled, predicted) pairs; 0 where undefined."""
    support = sum(1 for truth, _ in pairs if truth == label)
    predicted = sum(1 for _, guess in pairs if guess == label)
    hits = sum(1 for truth, guess in pairs if truth == guess == label)
    precision, recall = _ratio(hits, predicted), _ratio(hits, support)
    f1 = _ratio(2 * precision * recall, precision + recall) if precision + recall else 0.0
    return ClassScore(label, support, predicted, hits, precision, recall, f1)


def score(results: list[tuple[LabelledReport, Prediction]]) -> ExtractionScores:
    """All scores of one extractor on one set of labelled reports."""
    pairs = [(report.labels.triage, prediction.triage) for report, prediction in results]
    confusion = {truth: {guess: 0 for guess in TRIAGE_CLASSES} for truth in TRIAGE_CLASSES}
    for truth, guess in pairs:
        confusion[truth][guess] += 1
    false_alarm = [0, 0]
    kind, kind_strict, api, modes = [0, 0], [0, 0], [0, 0], [0, 0]
    misses: list[Miss] = []
    for report, prediction in results:
        labels = report.labels
        if labels.triage != prediction.triage:
            misses.append(Miss(report.id, report.category, labels.triage, prediction.triage))
        if labels.triage == "not_a_bug":
            false_alarm[1] += 1
            false_alarm[0] += prediction.false_alarm_class == labels.false_alarm_class
        if labels.triage != "silent_bug":
            continue
        for counter in (kind, kind_strict, api):
            counter[1] += 1
        kind[0] += prediction.kind in labels.accepted_kinds()
        kind_strict[0] += labels.kind is not None and prediction.kind == labels.kind.value
        api[0] += prediction.api in labels.apis
        if labels.modes:
            modes[1] += 1
            modes[0] += prediction.modes in [tuple(pair) for pair in labels.modes]
    return ExtractionScores(
        reports=len(results),
        triage=[class_score(label, pairs) for label in TRIAGE_CLASSES],
        confusion=confusion,
        false_alarm_class=Accuracy(*false_alarm),
        kind=Accuracy(*kind),
        kind_strict=Accuracy(*kind_strict),
        api=Accuracy(*api),
        modes=Accuracy(*modes),
        errors=sum(1 for _, prediction in results if prediction.error),
        misses=misses,
    )
