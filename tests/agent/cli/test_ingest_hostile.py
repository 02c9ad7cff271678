"""`transfuzz ingest file` against hostile dumps (issue 10): every attack is a skipped record or a clear error.

Each test runs the real command line on SQLite and, when configured, PostgreSQL, and reads
back what was stored. The attacks: lone surrogates, out-of-range issue numbers, 100,000 nested
brackets, a repo named ``../..``, NUL characters, huge bodies, Latin-1 bytes, and one bad
record inside a batch of 500.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from sqlalchemy import select
from typer.testing import CliRunner

from agent.cli.app import app
from agent.ingest.records import TRUNCATED_KEY, truncated_fields
from db.models import Issue
from db.store import open_store

runner = CliRunner()
REPO = "hostile/dump"


def _issue(number: int, **fields: Any) -> dict[str, Any]:
    record = {
        "number": number,
        "title": f"Issue {number}",
        "body": f"body of {number}",
        "state": "open",
        "labels": [],
        "html_url": f"https://github.com/{REPO}/issues/{number}",
    }
    return record | fields


def _array(records: list[str]) -> str:
    """A JSON array with one record per line, so that record k starts on line k + 1."""
    return "[\n" + ",\n".join(records) + "\n]\n"


def _ingest(db_url: str, dump: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, ["--db", db_url, "--json", "ingest", "file", str(dump), *args], env=env)


def _stored(db_url: str) -> dict[int, Issue]:
    store = open_store(db_url)
    try:
        with store.session() as session:
            return {issue.number: issue for issue in session.scalars(select(Issue))}
    finally:
        store.close()


def _summary(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _one_bad_among_good(tmp_path: Path, bad: str) -> Path:
    dump = tmp_path / "dump.json"
    dump.write_text(_array([json.dumps(_issue(1)), bad, json.dumps(_issue(3))]), encoding="utf-8")
    return dump


def _assert_only_record_2_skipped(db_url: str, result: Result, reason: str) -> None:
    data = _summary(result)
    assert (data["new"], data["bad_records"]) == (2, 1)
    assert data["problems"][0]["position"] == "record 2 (line 3)"
    assert reason in data["problems"][0]["reason"]
    assert f"skipped record 2 (line 3): {data['problems'][0]['reason']}" in result.stderr
    assert sorted(_stored(db_url)) == [1, 3]


def test_lone_surrogate_skips_the_record(db_url: str, tmp_path: Path) -> None:
    bad = json.dumps(_issue(2)).replace('"Issue 2"', '"Issue \\ud800 2"')
    result = _ingest(db_url, _one_bad_among_good(tmp_path, bad))
    _assert_only_record_2_skipped(db_url, result, "title: lone surrogate U+D800")


def test_surrogate_in_an_unknown_key_skips_the_record(db_url: str, tmp_path: Path) -> None:
    bad = json.dumps(_issue(2))[:-1] + ', "\\udfff": 1}'
    _assert_only_record_2_skipped(db_url, _ingest(db_url, _one_bad_among_good(tmp_path, bad)), "lone surrogate U+DFFF")


@pytest.mark.parametrize("number", [10**19, 2**31, 0, -1])
def test_issue_number_out_of_range_skips_the_record(db_url: str, tmp_path: Path, number: int) -> None:
    bad = json.dumps(_issue(2)).replace('"number": 2', f'"number": {number}')
    result = _ingest(db_url, _one_bad_among_good(tmp_path, bad))
    _assert_only_record_2_skipped(db_url, result, "issue number must be between 1 and 2147483647")


def test_largest_issue_number_is_stored(db_url: str, tmp_path: Path) -> None:
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps([_issue(2**31 - 1)]), encoding="utf-8")
    assert _summary(_ingest(db_url, dump))["new"] == 1
    assert list(_stored(db_url)) == [2**31 - 1]


def test_hundred_thousand_nested_brackets_skip_the_record(db_url: str, tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    bad = json.dumps(_issue(2))[:-1] + f', "extra": {deep}}}'
    _assert_only_record_2_skipped(db_url, _ingest(db_url, _one_bad_among_good(tmp_path, bad)), "nested too deeply")


def test_hundred_thousand_nested_brackets_in_json_lines(db_url: str, tmp_path: Path) -> None:
    dump = tmp_path / "dump.jsonl"
    deep = json.dumps(_issue(2))[:-1] + ', "extra": ' + "[" * 100_000 + "]" * 100_000 + "}"
    dump.write_text("\n".join([json.dumps(_issue(1)), deep, json.dumps(_issue(3))]) + "\n", encoding="utf-8")
    data = _summary(_ingest(db_url, dump))
    assert (data["new"], data["bad_records"]) == (2, 1)
    assert data["problems"][0] == {"position": "record 2 (line 2)", "reason": "invalid JSON: nested too deeply to decode"}


def test_nesting_the_decoder_survives_is_still_bounded(db_url: str, tmp_path: Path) -> None:
    bad = json.dumps(_issue(2) | {"extra": json.loads("[" * 200 + "]" * 200)})
    result = _ingest(db_url, _one_bad_among_good(tmp_path, bad))
    _assert_only_record_2_skipped(db_url, result, "nested deeper than 32 levels")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_number_skips_the_record(db_url: str, tmp_path: Path, literal: str) -> None:
    bad = json.dumps(_issue(2))[:-1] + f', "score": {literal}}}'
    _assert_only_record_2_skipped(db_url, _ingest(db_url, _one_bad_among_good(tmp_path, bad)), "is not a finite number")


@pytest.mark.parametrize(
    "html_url",
    [
        "https://github.com/../../issues/2",
        "https://github.com/owner/../issues/2",
        "https://github.com/own$er/repo/issues/2",
    ],
)
def test_repo_name_that_is_not_owner_repo_skips_the_record(db_url: str, tmp_path: Path, html_url: str) -> None:
    bad = json.dumps(_issue(2, html_url=html_url))
    result = _ingest(db_url, _one_bad_among_good(tmp_path, bad))
    _assert_only_record_2_skipped(db_url, result, "is not a valid OWNER/REPO")


@pytest.mark.parametrize("repo", ["../..", "a/b/c", "./x", "own er/x"])
def test_repo_flag_that_is_not_owner_repo_is_a_usage_error(tmp_path: Path, repo: str) -> None:
    dump = _one_bad_among_good(tmp_path, json.dumps(_issue(2)))
    result = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 'x.db'}", "ingest", "file", str(dump), "--repo", repo])
    assert result.exit_code == 2
    assert "--repo must be OWNER/REPO" in result.stderr


def test_bad_records_do_not_drop_their_batch(db_url: str, tmp_path: Path) -> None:
    records = [json.dumps(_issue(n)) for n in range(1, 601)]
    records[99] = records[99].replace('"Issue 100"', '"\\udc80"')
    records[199] = records[199].replace('"number": 200', f'"number": {10**19}')
    records[299] = json.dumps(_issue(300))[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    dump = tmp_path / "batch.json"
    dump.write_text(_array(records), encoding="utf-8")
    data = _summary(_ingest(db_url, dump))
    assert (data["new"], data["bad_records"]) == (597, 3)
    assert [p["position"] for p in data["problems"]] == ["record 100 (line 101)", "record 200 (line 201)", "record 300 (line 301)"]
    assert sorted(_stored(db_url)) == [n for n in range(1, 601) if n not in (100, 200, 300)]


def test_nul_characters_are_removed_before_storing(db_url: str, tmp_path: Path) -> None:
    dump = tmp_path / "nul.json"
    dump.write_text(
        json.dumps([_issue(1, title="a\u0000b", body="x\u0000y", labels=["bug\u0000"], extra={"k\u0000": "v\u0000"})]),
        encoding="utf-8",
    )
    assert _summary(_ingest(db_url, dump))["new"] == 1
    issue = _stored(db_url)[1]
    assert (issue.title, issue.body, issue.labels) == ("ab", "xy", ["bug"])
    assert issue.raw["extra"] == {"k": "v"}


def test_huge_body_is_capped_marked_and_stored_once(db_url: str, tmp_path: Path) -> None:
    body = "é" + "x" * (2 * 2**20)  # 2 MiB and a two-byte character
    dump = tmp_path / "huge.json"
    dump.write_text(json.dumps([_issue(1, body=body), _issue(2)]), encoding="utf-8")
    data = _summary(_ingest(db_url, dump, "--max-body-kib", "64"))
    assert (data["new"], data["bad_records"]) == (2, 0)
    stored = _stored(db_url)
    assert stored[1].body == body[: 64 * 1024 - 1] and len(stored[1].body.encode()) == 64 * 1024
    assert "body" not in stored[1].raw  # the body lives in its own column only
    assert truncated_fields(stored[1].raw) == {"body": len(body.encode())}
    assert stored[2].body == "body of 2" and TRUNCATED_KEY not in stored[2].raw


def test_body_cap_defaults_to_256_kib_and_follows_the_environment(tmp_path: Path) -> None:
    dump = tmp_path / "big.json"
    dump.write_text(json.dumps([_issue(1, body="y" * (300 * 1024))]), encoding="utf-8")
    default_db, env_db = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    _summary(_ingest(default_db, dump))
    _summary(_ingest(env_db, dump, env={"TRANSFUZZ_INGEST_MAX_BODY_KIB": "8"}))
    assert len(_stored(default_db)[1].body) == 256 * 1024
    assert len(_stored(env_db)[1].body) == 8 * 1024


def test_max_body_kib_below_one_is_a_usage_error(tmp_path: Path) -> None:
    dump = _one_bad_among_good(tmp_path, json.dumps(_issue(2)))
    result = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 'x.db'}", "ingest", "file", str(dump), "--max-body-kib", "0"])
    assert result.exit_code == 2 and "--max-body-kib must be at least 1" in result.stderr


def test_latin1_dump_is_refused_with_the_byte_offset(db_url: str, tmp_path: Path) -> None:
    text = json.dumps([_issue(1), _issue(2, title="café au lait")], ensure_ascii=False)
    dump = tmp_path / "latin1.json"
    dump.write_bytes(text.encode("latin-1"))
    offset = text.encode("latin-1").index(b"\xe9")
    result = runner.invoke(app, ["--db", db_url, "ingest", "file", str(dump)])
    assert result.exit_code == 2
    assert f"not utf-8 text at byte offset {offset} (line 1)" in result.stderr
    assert "--encoding" in result.stderr
    assert _stored(db_url) == {}  # refused before anything was written


def test_latin1_dump_reads_with_its_encoding(db_url: str, tmp_path: Path) -> None:
    text = "\n".join(json.dumps(_issue(n, title=f"café {n}"), ensure_ascii=False) for n in (1, 2))
    dump = tmp_path / "latin1.jsonl"
    dump.write_bytes(text.encode("latin-1"))
    assert _summary(_ingest(db_url, dump, "--encoding", "latin-1"))["new"] == 2
    assert _stored(db_url)[2].title == "café 2"


def test_utf16_dump_reads_with_its_encoding(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'u16.db'}"
    dump = tmp_path / "u16.json"
    dump.write_bytes(json.dumps([_issue(1, title="naïve")], ensure_ascii=False).encode("utf-16"))
    assert _summary(_ingest(db_url, dump, "--encoding", "utf-16"))["new"] == 1
    assert _stored(db_url)[1].title == "naïve"


def test_unknown_encoding_is_a_usage_error(tmp_path: Path) -> None:
    dump = _one_bad_among_good(tmp_path, json.dumps(_issue(2)))
    result = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 'x.db'}", "ingest", "file", str(dump), "--encoding", "klingon"])
    assert result.exit_code == 2 and "unknown encoding 'klingon'" in result.stderr


def test_javascript_link_is_not_stored(db_url: str, tmp_path: Path) -> None:
    dump = tmp_path / "js.json"
    record = _issue(1, html_url="javascript:alert(1)", repository_url=f"https://api.github.com/repos/{REPO}")
    dump.write_text(json.dumps([record]), encoding="utf-8")
    assert _summary(_ingest(db_url, dump))["new"] == 1
    assert _stored(db_url)[1].url == ""
