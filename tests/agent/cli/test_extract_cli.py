"""`transfuzz extract` through the CLI: summaries, --json, --only-changed, usage errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.cli.app import app
from tests.agent.extract.opinfo_cache import use_session_opinfo_cache
from tests.conftest import SAMPLE_ISSUES

runner = CliRunner()


@pytest.fixture(scope="session")
def opinfo_cache(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return use_session_opinfo_cache(tmp_path_factory.mktemp("opinfo"))


@pytest.fixture
def offline_env(monkeypatch: pytest.MonkeyPatch, opinfo_cache) -> None:  # type: ignore[no-untyped-def]
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TRANSFUZZ_LLM"):
        monkeypatch.delenv(var, raising=False)


def _ingest(db_url: str) -> None:
    result = runner.invoke(app, ["--db", db_url, "ingest", "file", str(SAMPLE_ISSUES)])
    assert result.exit_code == 0, result.stderr


def test_extract_json_then_only_changed(db_url: str, offline_env) -> None:  # type: ignore[no-untyped-def]
    _ingest(db_url)
    result = runner.invoke(app, ["--db", db_url, "--json", "extract", "--llm", "offline", "--limit", "6"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["extractor"] == "offline" and data["processed"] == 6 and data["errors"] == 0
    assert data["extracted"] + data["not_silent"] + sum(data["false_alarms"].values()) == 6
    assert data["tokens"] == 0 and data["cost_usd"] == 0.0
    rest = runner.invoke(app, ["--db", db_url, "--json", "extract", "--only-changed"])
    assert rest.exit_code == 0, rest.stderr
    stats = json.loads(runner.invoke(app, ["--db", db_url, "--json", "stats"]).stdout)
    assert json.loads(rest.stdout)["processed"] == stats["tables"]["issues"]["total"] - 6 > 0
    again = runner.invoke(app, ["--db", db_url, "--json", "extract"])
    assert json.loads(again.stdout)["due"] == 0


def test_extract_human_summary(db_url: str, offline_env) -> None:  # type: ignore[no-untyped-def]
    _ingest(db_url)
    result = runner.invoke(app, ["--db", db_url, "extract", "--limit", "3"])
    assert result.exit_code == 0, result.stderr
    assert "issues processed" in result.stdout and "3 of 3 due" in result.stdout


@pytest.mark.parametrize("args", [["--limit", "0"], ["--llm", "gpt"]])
def test_usage_errors_exit_2(db_url: str, args: list[str]) -> None:
    result = runner.invoke(app, ["--db", db_url, "extract", *args])
    assert result.exit_code == 2


def test_unreachable_endpoint_exits_1_with_errors_recorded(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _ingest(db_url)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    result = runner.invoke(app, ["--db", db_url, "--json", "extract", "--limit", "1"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["extractor"].startswith("openai:") and data["errors"] == 1
    assert "dummy" not in result.stdout + result.stderr


def test_openai_without_endpoint_or_key_exits_2(db_url: str, offline_env) -> None:  # type: ignore[no-untyped-def]
    result = runner.invoke(app, ["--db", db_url, "extract", "--llm", "openai"])
    assert result.exit_code == 2
    assert "OPENAI_BASE_URL" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_openai_run_reports_tokens_and_cost(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.agent.extract.test_stage import ISSUE_BODY, PATTERN, SEMANTICS, TRIAGE
    from tests.agent.llm.fake_openai_server import Reply, ScriptedServer

    dump = {"title": "cumsum in bf16 stops at 256", "body": ISSUE_BODY, "number": 1, "state": "open",
            "labels": [{"name": "module: correctness (silent)"}],
            "html_url": "https://github.com/acme/torchish/issues/1"}
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "one.json"
        path.write_text(json.dumps([dump]))
        result = runner.invoke(app, ["--db", db_url, "ingest", "file", str(path)])
        assert result.exit_code == 0, result.stderr
    with ScriptedServer([Reply(TRIAGE), Reply(PATTERN), Reply(SEMANTICS)]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "dummy")
        result = runner.invoke(app, ["--db", db_url, "extract", "--model", "gpt-4o-mini"])
    assert result.exit_code == 0, result.stderr
    assert "openai:gpt-4o-mini" in result.stdout
    assert "33 + 21" in result.stdout  # 3 calls x (11 prompt + 7 completion) tokens
    assert "$0.000018" in result.stdout  # gpt-4o-mini: $0.15 / $0.60 per million tokens
