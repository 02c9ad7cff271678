"""The command-line contract: commands listed, global options, honest placeholders, clear DB errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from agent.cli.app import app

runner = CliRunner()
CONTRACT_COMMANDS = ("run", "ingest", "extract", "transfer", "fuzz", "review", "serve", "export", "stats", "db")


def test_help_lists_the_contract_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in CONTRACT_COMMANDS:
        assert f" {command} " in result.stdout


def test_stats_json_on_a_fresh_database(store) -> None:  # type: ignore[no-untyped-def]
    result = runner.invoke(app, ["--db", store.url, "--json", "stats"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["tables"]["issues"] == {"total": 0, "by_status": {}}
    assert "findings" in data["tables"]


def test_unreachable_database_is_one_masked_line_and_exit_2() -> None:
    url = "postgresql+psycopg://alice:s3cret-pw@127.0.0.1:1/nowhere"
    result = runner.invoke(app, ["--db", url, "stats"])
    assert result.exit_code == 2
    assert "s3cret-pw" not in result.stderr + result.stdout
    assert "alice:***@127.0.0.1:1/nowhere" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_malformed_database_url_exits_2() -> None:
    result = runner.invoke(app, ["--db", "no-such-scheme://x", "stats"])
    assert result.exit_code == 2
    assert "no-such-scheme" in result.stderr


def test_db_current_then_upgrade(db_url: str) -> None:
    before = runner.invoke(app, ["--db", db_url, "--json", "db", "current"])
    assert before.exit_code == 0, before.stderr
    assert json.loads(before.stdout)["up_to_date"] is False
    upgraded = runner.invoke(app, ["--db", db_url, "--json", "db", "upgrade"])
    assert upgraded.exit_code == 0, upgraded.stderr
    after = json.loads(runner.invoke(app, ["--db", db_url, "--json", "db", "current"]).stdout)
    assert after["up_to_date"] is True and after["current"] == after["head"]


def test_console_script_runs_in_a_fresh_process(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TRANSFUZZ_DB_URL"}
    url = f"sqlite:///{tmp_path / 'x.db'}"
    subprocess.run([sys.executable, "-m", "agent.cli", "--db", url, "db", "upgrade"], check=True, capture_output=True,
                   env=env, timeout=120)
    result = subprocess.run(
        [sys.executable, "-m", "agent.cli", "--db", url, "--json", "stats"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["tables"]["runs"]["total"] == 0
