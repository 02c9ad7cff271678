"""`transfuzz ingest file|github` through the real command line: summaries, --json, exit codes, no secrets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.app import app
from tests.agent.ingest.conftest import SAMPLE_REPO, github_state
from tests.agent.ingest.github_server import LoopbackGitHub
from tests.conftest import SAMPLE_ISSUES

runner = CliRunner()
TOKEN = "ghp_s3cretTokenValue"


@pytest.fixture
def github() -> Iterator[LoopbackGitHub]:
    with LoopbackGitHub(github_state()) as server:
        yield server


def test_file_text_then_json(db_url: str) -> None:
    first = runner.invoke(app, ["--db", db_url, "ingest", "file", str(SAMPLE_ISSUES)])
    assert first.exit_code == 0, first.stderr
    assert "28 new, 0 updated, 0 unchanged, 2 pull requests skipped, 0 bad records" in first.stdout
    again = runner.invoke(app, ["--db", db_url, "--json", "ingest", "file", str(SAMPLE_ISSUES)])
    assert again.exit_code == 0, again.stderr
    data = json.loads(again.stdout)
    assert (data["new"], data["updated"], data["unchanged"], data["pull_requests"], data["bad_records"]) == (0, 0, 28, 2, 0)
    assert data["issues"] == 28 and data["repos"] == [SAMPLE_REPO]


def test_file_bad_records_go_to_stderr_and_the_summary(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'cli.db'}"
    records = json.loads(SAMPLE_ISSUES.read_text())
    dump = tmp_path / "dump.jsonl"
    lines = [json.dumps(r) for r in records[:5]]
    lines[2] = lines[2][:40]
    dump.write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["--db", db_url, "--json", "ingest", "file", str(dump)])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["new"] == 4 and data["bad_records"] == 1
    assert data["problems"][0]["position"] == "record 3 (line 3)"
    assert "skipped record 3 (line 3): invalid JSON" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ingest", "file", "no/such/dump.json"], "no such file"),
        (["ingest", "file", str(SAMPLE_ISSUES), "--repo", "not-a-repo"], "--repo must be OWNER/REPO"),
        (["ingest", "github", "pytorch"], "repository must be OWNER/REPO"),
        (["ingest", "github", "a/b", "--state", "merged"], "'merged' is not one of 'open', 'closed', 'all'"),
        (["ingest", "github", "a/b", "--since", "last week"], "--since must be an ISO date"),
        (["ingest", "github", "a/b", "--limit", "0"], "--limit must be at least 1"),
    ],
)
def test_usage_errors_exit_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 'usage.db'}", *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_file_that_is_not_a_dump_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "issues.csv"
    bad.write_text("number,title\n1,x\n")
    result = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 'bad.db'}", "ingest", "file", str(bad)])
    assert result.exit_code == 2
    assert "not a JSON array or JSON Lines" in result.stderr


def test_github_with_token_incremental_and_nothing_secret_printed(db_url: str, github: LoopbackGitHub) -> None:
    github.state.token = TOKEN
    args = ["--db", db_url, "--json", "ingest", "github", SAMPLE_REPO, "--api-url", github.api_url, "--comments"]
    first = runner.invoke(app, args, env={"GITHUB_TOKEN": TOKEN})
    assert first.exit_code == 0, first.stderr
    data = json.loads(first.stdout)
    assert data["new"] == 28 and data["pull_requests"] == 2 and data["comments_fetched"] > 0
    assert data["cursor_key"] == f"{SAMPLE_REPO}?labels=&state=all&since="
    second = runner.invoke(app, args, env={"GITHUB_TOKEN": TOKEN})
    assert second.exit_code == 0, second.stderr
    assert json.loads(second.stdout)["new"] == 0
    for result in (first, second):
        assert TOKEN not in result.stdout + result.stderr


def test_github_text_summary_with_filters(tmp_path: Path, github: LoopbackGitHub) -> None:
    db_url = f"sqlite:///{tmp_path / 'cli.db'}"
    result = runner.invoke(
        app,
        ["--db", db_url, "ingest", "github", SAMPLE_REPO, "--api-url", github.api_url,
         "--label", "module: correctness (silent)", "--state", "closed", "--since", "2024-01-01", "--limit", "3"],
        env={"GITHUB_TOKEN": ""},
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"github:{SAMPLE_REPO}: 3 new")
    query = github.requests_to("/issues")[0].query
    assert query["labels"] == "module: correctness (silent)" and query["state"] == "closed"
    assert query["since"] == "2024-01-01T00:00:00Z"


def test_github_refusal_exits_1_with_the_reason(tmp_path: Path, github: LoopbackGitHub) -> None:
    db_url = f"sqlite:///{tmp_path / 'cli.db'}"
    github.state.token = TOKEN
    result = runner.invoke(
        app, ["--db", db_url, "ingest", "github", SAMPLE_REPO, "--api-url", github.api_url], env={"GITHUB_TOKEN": "ghp_wrongTokenValue"}
    )
    assert result.exit_code == 1
    assert "HTTP 401" in result.stderr and "Bad credentials" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "ghp_wrongTokenValue" not in result.stdout + result.stderr
