"""Dump files into the database: every format, idempotency, change detection, bad records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select, update

from agent.ingest import ingest_source
from agent.ingest.file_source import ingest_file
from agent.ingest.summary import IngestEvents
from db.models import Issue
from db.store import Store
from tests.agent.ingest.conftest import SAMPLE_REPO, sample_records
from tests.agent.ingest.test_records import as_gh_cli
from tests.conftest import SAMPLE_ISSUES

SAMPLE_ISSUE_COUNT = 28  # 30 records, 2 of them pull requests


def _issues(store: Store) -> dict[int, Issue]:
    with store.session() as session:
        return {i.number: i for i in session.scalars(select(Issue))}


def test_sample_dump_then_reingest_is_idempotent(store: Store) -> None:
    first = ingest_file(store, SAMPLE_ISSUES)
    assert (first.new, first.updated, first.unchanged) == (SAMPLE_ISSUE_COUNT, 0, 0)
    assert first.pull_requests == 2 and first.bad_records == 0
    assert first.repos == [SAMPLE_REPO]
    with store.session() as session:
        session.execute(update(Issue).values(needs_extraction=False))
    before = _issues(store)
    second = ingest_source(store, str(SAMPLE_ISSUES))
    assert (second.new, second.updated, second.unchanged) == (0, 0, SAMPLE_ISSUE_COUNT)
    after = _issues(store)
    assert {n: (i.changed_at, i.needs_extraction) for n, i in after.items()} == {
        n: (i.changed_at, False) for n, i in before.items()
    }


def test_changed_issue_is_marked_for_reextraction(store: Store, tmp_path: Path) -> None:
    records = sample_records()
    ingest_file(store, SAMPLE_ISSUES)
    with store.session() as session:
        session.execute(update(Issue).values(needs_extraction=False))
    records[0]["title"] += " (narrowed down to fp16)"
    records[4]["labels"] = records[4]["labels"][:1]
    records[5]["reactions"] = {"+1": 7}  # not content: no re-extraction
    dump = tmp_path / "edited.json"
    dump.write_text(json.dumps(records), encoding="utf-8")
    summary = ingest_file(store, dump)
    assert (summary.new, summary.updated, summary.unchanged) == (0, 2, SAMPLE_ISSUE_COUNT - 2)
    flagged = {n for n, i in _issues(store).items() if i.needs_extraction}
    assert flagged == {records[0]["number"], records[4]["number"]}


def test_json_lines_and_gh_cli_formats(store: Store, tmp_path: Path) -> None:
    issues = [r for r in sample_records() if "pull_request" not in r]
    jsonl = tmp_path / "dump.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in issues[:10]) + "\n", encoding="utf-8")
    gh = tmp_path / "gh.json"
    gh.write_text(json.dumps([as_gh_cli(r) for r in issues], indent=2), encoding="utf-8")

    lines = ingest_file(store, jsonl)
    assert (lines.new, lines.bad_records) == (10, 0)
    from_gh = ingest_file(store, gh)
    # gh output carries comments, REST dumps do not: the first ten gain comments (where they have any)
    with_comments = sum(1 for r in issues[:10] if r["comments"])
    assert from_gh.new == len(issues) - 10
    assert from_gh.updated == with_comments
    assert from_gh.unchanged == 10 - with_comments
    stored = _issues(store)
    assert all(len(stored[r["number"]].comments) == r["comments"] for r in issues)
    assert stored[issues[0]["number"]].state == "open"
    # a later REST dump (comment counts only) keeps the comments and changes nothing
    again = ingest_file(store, SAMPLE_ISSUES)
    assert again.unchanged == SAMPLE_ISSUE_COUNT
    assert all(len(i.comments) == next(r["comments"] for r in issues if r["number"] == n) for n, i in _issues(store).items())


def test_bad_and_truncated_records_are_reported_and_the_rest_ingested(store: Store, tmp_path: Path) -> None:
    records = sample_records()
    issues = [r for r in records if "pull_request" not in r]
    parts = [json.dumps(r, indent=2) for r in issues[:6]]
    parts[1] = parts[1].replace('"state":', '"state" ', 1)  # malformed JSON
    parts[3] = json.dumps({**issues[3], "number": "three"})  # valid JSON, not an issue
    text = "[\n" + ",\n".join(parts) + ",\n" + json.dumps(issues[6])[:200]  # cut inside the 7th
    dump = tmp_path / "broken.json"
    dump.write_text(text, encoding="utf-8")
    messages: list[str] = []
    summary = ingest_file(store, dump, events=IngestEvents(notify=messages.append))
    assert summary.new == 4
    assert set(_issues(store)) == {issues[i]["number"] for i in (0, 2, 4, 5)}
    assert summary.bad_records == 3
    positions = [p.position for p in summary.problems]
    assert positions[0].startswith("record 2 (line ") and positions[1].startswith("record 4 (line ")
    assert positions[2].startswith("record 7 (line ")
    reasons = [p.reason for p in summary.problems]
    assert "Expecting ':' delimiter" in reasons[0]
    assert "number" in reasons[1]
    assert reasons[2] == "truncated: the file ends inside this record"
    assert len(messages) == 3 and all(m.startswith("skipped record ") for m in messages)


def test_small_batches_give_the_same_result(store: Store) -> None:
    summary = ingest_file(store, SAMPLE_ISSUES, batch_size=7)
    assert summary.new == SAMPLE_ISSUE_COUNT
    assert len(_issues(store)) == SAMPLE_ISSUE_COUNT


def test_progress_reports_bytes_read(store: Store) -> None:
    seen: list[tuple[int, int | None]] = []
    ingest_file(store, SAMPLE_ISSUES, events=IngestEvents(progress=lambda done, total: seen.append((done, total))))
    size = SAMPLE_ISSUES.stat().st_size
    assert seen and seen[-1] == (size, size)


def test_limit_caps_the_issues_taken(store: Store) -> None:
    summary = ingest_source(store, str(SAMPLE_ISSUES), limit=5)
    assert summary.new == 5 and summary.limit_reached
    assert len(_issues(store)) == 5


def test_github_source_prefix_goes_to_github(store: Store) -> None:
    with pytest.raises(ValueError, match="OWNER/REPO"):
        ingest_source(store, "github:not-a-repo")
