"""The labels schema, and the shipped evaluation set: valid, large enough, split, every category."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from agent.eval.labels import LabelsFileError, load_labels, parse_labels, select_split
from agent.llm.schemas import FALSE_ALARM_CLASSES
from tests.conftest import REPO_ROOT

LABELS_FILE = REPO_ROOT / "examples" / "eval" / "extraction_labels.jsonl"
# the categories of issue 15's "missed reports", and the not-silent kinds of report
REQUIRED_CATEGORIES = {"gradient", "device", "layout_aliasing", "trace_constant", "vague_title", "compile_fixed",
                       "false_alarm", "crash", "feature", "docs"}


def _line(**override: object) -> str:
    record = {"id": "r1", "split": "dev", "category": "gradient", "title": "t", "body": "b",
              "labels": {"triage": "silent_bug", "kind": "Gradient_Mismatch", "apis": ["torch.norm"],
                         "modes": [["eager", "grad"]]}}
    record.update(override)
    return json.dumps(record)


@pytest.fixture(scope="module")
def shipped():  # type: ignore[no-untyped-def]
    return load_labels(LABELS_FILE)


def test_shipped_file_has_enough_records_and_a_third_held_out(shipped) -> None:  # type: ignore[no-untyped-def]
    assert len(shipped) >= 120
    heldout = len(select_split(shipped, "heldout"))
    assert abs(heldout - len(shipped) / 3) <= 2
    assert len(select_split(shipped, "dev")) + heldout == len(shipped)


def test_shipped_file_covers_every_category_and_class_in_both_splits(shipped) -> None:  # type: ignore[no-untyped-def]
    assert REQUIRED_CATEGORIES <= {r.category for r in shipped}
    assert set(FALSE_ALARM_CLASSES) == {r.labels.false_alarm_class for r in shipped if r.labels.false_alarm_class}
    for split in ("dev", "heldout"):
        triage = Counter(r.labels.triage for r in select_split(shipped, split))
        assert set(triage) == {"silent_bug", "not_a_bug", "not_silent"}, (split, triage)
    assert any(not r.labels.repro_runs_on_cpu for r in shipped)
    assert any(r.comments for r in shipped if r.labels.triage == "not_a_bug")


def test_shipped_silent_bug_apis_are_public_torch_names(shipped) -> None:  # type: ignore[no-untyped-def]
    from fuzz_core.api_names import rejection_reason

    bad = {(r.id, api): rejection_reason(api) for r in shipped for api in r.labels.apis if rejection_reason(api)}
    assert not bad


def test_a_bad_line_is_named_with_its_field() -> None:
    text = _line() + "\n" + _line(id="r2", split="test") + "\n"
    with pytest.raises(LabelsFileError, match=r"<labels>:2: split"):
        parse_labels(text)


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ({"triage": "not_a_bug"}, "false_alarm_class is set exactly"),
        ({"triage": "silent_bug", "apis": ["torch.norm"]}, "needs its kind"),
        ({"triage": "silent_bug", "kind": "NaN_Inf", "apis": ["torch.log"], "modes": [["eager", "gpu"]]}, "unknown mode"),
        ({"triage": "not_silent", "false_alarm_class": "made_up"}, "false_alarm_class"),
    ],
)
def test_inconsistent_labels_are_refused(labels: dict, message: str) -> None:
    with pytest.raises(LabelsFileError, match=message):
        parse_labels(_line(labels=labels))


def test_duplicate_ids_and_non_json_are_refused() -> None:
    with pytest.raises(LabelsFileError, match="duplicate id 'r1'"):
        parse_labels(_line() + "\n" + _line())
    with pytest.raises(LabelsFileError, match=r":1: not JSON"):
        parse_labels("{oops\n")
    with pytest.raises(LabelsFileError, match="no records"):
        parse_labels("\n\n")
