"""Real-issue labels: parsing that names the bad line, the join to an issue dump by number, the fixed split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.eval.issue_labels import (DumpFileError, issue_split, join, load_dump, load_issue_labels,
                                     parse_issue_labels, select_issue_split)
from agent.eval.labels import LabelsFileError
from tests.agent.eval.issue_dump import ISSUES, LABELS, label, write_dump, write_labels


def test_join_pairs_each_label_with_the_dump_issue_of_its_number(tmp_path: Path) -> None:
    joined = join(load_issue_labels(write_labels(tmp_path)), load_dump(write_dump(tmp_path)))
    assert [(r.number, r.issue.number) for r in joined] == [(3, 3), (4, 4), (1, 1), (2, 2)]
    assert joined[0].issue.title == "cumsum in bfloat16 returns the wrong total"
    assert joined[0].label.kind == "Precision_Mismatch"


def test_a_label_whose_issue_is_not_in_the_dump_names_its_line(tmp_path: Path) -> None:
    labels = load_issue_labels(write_labels(tmp_path, [*LABELS, label(99, "bug", "NaN_Inf", [], [])]))
    with pytest.raises(LabelsFileError, match=r"labels.jsonl:5: issue #99 is not in the issue dump"):
        join(labels, load_dump(write_dump(tmp_path)), str(tmp_path / "labels.jsonl"))


def test_a_line_that_is_not_json_names_its_line() -> None:
    text = json.dumps(LABELS[0]) + "\n{not json\n"
    with pytest.raises(LabelsFileError, match=r"^f.jsonl:2: not JSON"):
        parse_issue_labels(text, "f.jsonl")


def test_a_bad_verdict_names_its_line_and_field() -> None:
    text = json.dumps(LABELS[0]) + "\n\n" + json.dumps({**LABELS[1], "verdict": "maybe"}) + "\n"
    with pytest.raises(LabelsFileError, match=r"^f.jsonl:3: verdict:"):
        parse_issue_labels(text, "f.jsonl")


def test_a_number_labelled_twice_names_both_lines() -> None:
    text = json.dumps(LABELS[0]) + "\n" + json.dumps(LABELS[0]) + "\n"
    with pytest.raises(LabelsFileError, match=r"f.jsonl:2: issue #3 is labelled again \(first on line 1\)"):
        parse_issue_labels(text, "f.jsonl")


def test_fields_the_format_does_not_name_are_ignored() -> None:
    [entry] = parse_issue_labels(json.dumps({**LABELS[0], "reviewer": "someone"}))
    assert entry.line == 1 and entry.label.number == 3


def test_the_split_of_an_issue_number_never_changes() -> None:
    # fixed when the real-issue format was added, before any rule was tuned on it
    assert {n: issue_split(n) for n in (1, 2, 3, 4, 11, 12)} == {
        1: "eval", 2: "eval", 3: "train", 4: "train", 11: "train", 12: "train"}


def test_the_split_depends_on_the_number_only(tmp_path: Path) -> None:
    labels = load_issue_labels(write_labels(tmp_path))
    alone = join(labels[:1], load_dump(write_dump(tmp_path, ISSUES[:1])))
    together = join(labels, load_dump(write_dump(tmp_path)))
    assert alone[0].split == together[0].split == "train"
    assert [r.number for r in select_issue_split(together, "eval")] == [1, 2]
    assert [r.number for r in select_issue_split(together, "train")] == [3, 4]


def test_the_dump_skips_pull_requests_as_ingest_does(tmp_path: Path) -> None:
    assert sorted(load_dump(write_dump(tmp_path))) == [1, 2, 3, 4]


def test_a_dump_record_ingest_would_reject_is_an_error_naming_the_record(tmp_path: Path) -> None:
    broken = [ISSUES[0], {"number": 5, "state": "closed"}]  # no title
    with pytest.raises(DumpFileError, match=r"record 2 \(line 1\)"):
        load_dump(write_dump(tmp_path, broken))


def test_a_missing_dump_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DumpFileError, match="no such file"):
        load_dump(tmp_path / "none.json")
