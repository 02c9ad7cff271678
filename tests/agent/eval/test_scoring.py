"""Scoring on tiny hand-made label sets whose answers are worked out by hand."""

from __future__ import annotations

import pytest

from agent.eval.labels import LabelledReport, ReportLabels
from agent.eval.scoring import Prediction, class_score, score


def _report(ident: str, triage: str, **labels: object) -> LabelledReport:
    return LabelledReport(id=ident, split="dev", category="test", title=ident,
                          labels=ReportLabels(triage=triage, **labels))  # type: ignore[arg-type]


def _silent(ident: str) -> LabelledReport:
    return _report(ident, "silent_bug", kind="Compile_Eager_Mismatch", also_kinds=["NaN_Inf"],
                   apis=["torch.var", "torch.Tensor.var"], modes=[("eager", "compile:inductor")])


def test_class_score_by_hand() -> None:
    # labelled a,a,a,b ; predicted a,b,a,a -> a: tp 2, predicted 3, support 3
    pairs = [("a", "a"), ("a", "b"), ("a", "a"), ("b", "a")]
    got = class_score("a", pairs)
    assert (got.support, got.predicted, got.true_positives) == (3, 3, 2)
    assert got.precision == pytest.approx(2 / 3) and got.recall == pytest.approx(2 / 3)
    assert got.f1 == pytest.approx(2 / 3)
    b = class_score("b", pairs)
    assert (b.precision, b.recall, b.f1) == (0.0, 0.0, 0.0)


def test_class_never_predicted_nor_labelled_scores_zero() -> None:
    got = class_score("c", [("a", "a")])
    assert (got.support, got.predicted, got.precision, got.recall, got.f1) == (0, 0, 0.0, 0.0, 0.0)


def test_triage_confusion_and_false_alarm_class() -> None:
    results = [
        (_silent("s1"), Prediction("silent_bug", kind="Compile_Eager_Mismatch", api="torch.var",
                                   modes=("eager", "compile:inductor"))),
        (_silent("s2"), Prediction("not_silent")),
        (_report("f1", "not_a_bug", false_alarm_class="ties"), Prediction("not_a_bug", false_alarm_class="ties")),
        (_report("f2", "not_a_bug", false_alarm_class="low_precision"),
         Prediction("not_a_bug", false_alarm_class="bitwise_comparison")),
        (_report("n1", "not_silent"), Prediction("silent_bug", kind="Crash", api="torch.histc")),
    ]
    scores = score(results)
    silent = scores.class_score("silent_bug")
    assert (silent.support, silent.predicted, silent.true_positives) == (2, 2, 1)
    assert silent.precision == 0.5 and silent.recall == 0.5
    assert scores.class_score("not_a_bug").precision == 1.0  # the class named may be wrong, triage is right
    assert scores.confusion["silent_bug"] == {"silent_bug": 1, "not_a_bug": 0, "not_silent": 1}
    assert scores.confusion["not_silent"]["silent_bug"] == 1
    assert (scores.false_alarm_class.hits, scores.false_alarm_class.total) == (1, 2)
    assert [m.id for m in scores.misses] == ["s2", "n1"]


def test_pattern_accuracies_count_missing_patterns_as_misses() -> None:
    results = [
        (_silent("a"), Prediction("silent_bug", kind="NaN_Inf", api="torch.Tensor.var",
                                  modes=("eager", "compile:inductor"))),
        (_silent("b"), Prediction("silent_bug", kind="Compile_Eager_Mismatch", api="torch.std",
                                  modes=("eager", "jit.trace"))),
        (_silent("c"), Prediction("silent_bug")),  # triaged right, no pattern
        (_report("d", "not_silent"), Prediction("not_silent")),  # not counted
    ]
    scores = score(results)
    assert (scores.kind.hits, scores.kind.total) == (2, 3)  # NaN_Inf is an accepted alternative
    assert (scores.kind_strict.hits, scores.kind_strict.total) == (1, 3)
    assert (scores.api.hits, scores.api.total) == (1, 3)
    assert (scores.modes.hits, scores.modes.total) == (1, 3)


def test_reports_without_expressible_modes_are_left_out_of_mode_accuracy() -> None:
    mps = _report("m", "silent_bug", kind="Device_Mismatch", apis=["torch.cumsum"], modes=[])
    scores = score([(mps, Prediction("silent_bug", kind="Device_Mismatch", api="torch.cumsum",
                                     modes=("eager", "device:cuda")))])
    assert (scores.modes.hits, scores.modes.total) == (0, 0)
    assert scores.kind.rate == 1.0 and scores.api.rate == 1.0


def test_errors_are_counted_and_json_is_plain() -> None:
    scores = score([(_silent("e"), Prediction("not_silent", error="triage: timeout"))])
    data = scores.to_dict()
    assert data["errors"] == 1 and data["reports"] == 1
    assert data["triage"][0]["label"] == "silent_bug" and data["triage"][0]["recall"] == 0.0
    assert data["misses"] == [{"id": "e", "category": "test", "expected": "silent_bug", "got": "not_silent"}]
