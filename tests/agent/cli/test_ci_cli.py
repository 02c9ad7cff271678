"""`fuzz`/`run` CI and executor options through the CLI: bad values exit 2, a second SQLite driver exits 1."""

from __future__ import annotations

from pathlib import Path

import pytest
from junitparser import JUnitXml
from typer.testing import CliRunner

from agent.cli.app import app
from db.queries import campaign as q
from db.store import open_store

runner = CliRunner()


@pytest.mark.parametrize("args, message", [
    (["--executor", "dask"], "--executor must be one of local, ray"),
    (["--ray-address", "auto"], "--ray-address needs --executor ray"),
    (["--fail-on", "passed"], "--fail-on must be one of confirmed, suspicious"),
])
def test_a_bad_ci_or_executor_option_is_a_usage_error(args: list[str], message: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 't.db'}", "fuzz", "--budget", "5s", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_a_second_driver_on_sqlite_is_refused_with_the_live_run(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}"
    store = open_store(url)
    with store.session() as session:  # what a live driver leaves: an open run with a fresh heartbeat
        live = q.start_run(session, "fuzz", {})
    store.close()
    result = runner.invoke(app, ["--db", url, "fuzz", "--budget", "5s"])
    assert result.exit_code == 1, result.output
    assert f"fuzz run {live} is still running" in result.output and "PostgreSQL" in result.output


def test_an_empty_campaign_writes_an_empty_junit_file_and_passes_the_gate(tmp_path: Path) -> None:
    junit = tmp_path / "r" / "junit.xml"
    result = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 't.db'}", "fuzz", "--budget", "5s",
                                 "--fail-on", "confirmed", "--junit", str(junit)])
    assert result.exit_code == 0, result.output
    assert next(iter(JUnitXml.fromfile(str(junit)))).tests == 0
