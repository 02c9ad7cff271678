"""`fuzz`/`run` CI and executor options through the CLI: bad values exit 2, a second SQLite driver exits 1, and the
gate fails a run that errored or executed nothing unless --allow-errors is given."""

from __future__ import annotations

from pathlib import Path

import pytest
from junitparser import Error, JUnitXml
from typer.testing import CliRunner

from agent.cli.app import app
from db.queries import campaign as q
from db.queries import transfer as tq
from db.store import open_store
from tests.db.fixtures import add_issue_with_pattern

runner = CliRunner()


@pytest.mark.parametrize("args, message", [
    (["--executor", "dask"], "--executor must be one of local, ray"),
    (["--ray-address", "auto"], "--ray-address needs --executor ray"),
    (["--fail-on", "passed"], "--fail-on must be one of confirmed, suspicious"),
    (["--allow-errors"], "--allow-errors needs --fail-on"),
])
def test_a_bad_ci_or_executor_option_is_a_usage_error(args: list[str], message: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 't.db'}", "fuzz", "--budget", "5s", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_run_refuses_allow_errors_without_a_gate_before_any_work(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 't.db'}", "run", "examples/sample_issues.json",
                                 "--allow-errors"])
    assert result.exit_code == 2, result.output
    assert "--allow-errors needs --fail-on" in result.output and not (tmp_path / "t.db").exists()


def test_a_second_driver_on_sqlite_is_refused_with_the_live_run(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}"
    store = open_store(url)
    with store.session() as session:  # what a live driver leaves: an open run with a fresh heartbeat
        live = q.start_run(session, "fuzz", {})
    store.close()
    result = runner.invoke(app, ["--db", url, "fuzz", "--budget", "5s"])
    assert result.exit_code == 1, result.output
    assert f"fuzz run {live} is still running" in result.output and "PostgreSQL" in result.output


def test_an_empty_campaign_fails_the_gate_saying_no_input_was_executed(tmp_path: Path) -> None:
    junit = tmp_path / "r" / "junit.xml"
    result = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 't.db'}", "fuzz", "--budget", "5s",
                                 "--fail-on", "confirmed", "--junit", str(junit)])
    assert result.exit_code == 1, result.output
    assert "gate failed (--fail-on confirmed): no input was executed in fuzz run 1 (no harness ran;" in result.output
    suite = next(iter(JUnitXml.fromfile(str(junit))))
    assert (suite.tests, suite.errors) == (1, 1)


def test_allow_errors_lets_an_empty_campaign_pass_and_the_junit_file_still_says_so(tmp_path: Path) -> None:
    junit = tmp_path / "r" / "junit.xml"
    result = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 't.db'}", "fuzz", "--budget", "5s",
                                 "--fail-on", "confirmed", "--allow-errors", "--junit", str(junit)])
    assert result.exit_code == 0, result.output
    assert "no input was executed in fuzz run 1 (no harness ran), accepted by --allow-errors" in result.output
    [case] = next(iter(JUnitXml.fromfile(str(junit))))
    assert [r.type for r in case.result] == ["nothing_executed"]


INPUTS = {"args": [{"kind": "tensor", "tensor": {"shape": [4, 6]}}]}
GOOD = {"api": "torch.relu", "reference_mode": "eager", "test_mode": "layout:noncontiguous", "input_source": "described",
        "inputs": INPUTS, "seed": 3, "kind": "Layout_Mismatch", "max_executions": 20}


def _good_and_broken_harness(url: str) -> int:
    """A database with one harness that runs 20 inputs and one whose spec does not load; the broken one's id."""
    store = open_store(url)
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        good, bad = tq.add_candidates(session, pattern_id, [{"target_api": "torch.relu", "score": 0.9},
                                                            {"target_api": "torch.nope", "score": 0.8}])
        tq.add_harness(session, good.id, GOOD)
        broken = tq.add_harness(session, bad.id, {"api": "torch.nope", "no_such_field": 1}).id
    store.close()
    return broken


def test_a_harness_that_errors_fails_the_gate_through_the_cli(tmp_path: Path) -> None:
    url, junit = f"sqlite:///{tmp_path / 't.db'}", tmp_path / "junit.xml"
    broken = _good_and_broken_harness(url)
    result = runner.invoke(app, ["--db", url, "fuzz", "--budget", "60s", "--workers", "1", "--scheduler", "even",
                                 "--min-inputs", "10", "--fail-on", "confirmed", "--junit", str(junit)])
    assert result.exit_code == 1, result.output
    assert f"1 harness errored in fuzz run 1 (harness {broken}; --allow-errors to accept)" in result.output
    assert "no input was executed" not in result.output  # the good harness ran its 20 inputs
    errors = [r for case in next(iter(JUnitXml.fromfile(str(junit)))) for r in case.result if isinstance(r, Error)]
    assert [e.type for e in errors] == ["harness_error"] and "does not load" in errors[0].message


def test_allow_errors_lets_a_harness_error_pass_through_the_cli(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}"
    _good_and_broken_harness(url)
    result = runner.invoke(app, ["--db", url, "fuzz", "--budget", "60s", "--workers", "1", "--scheduler", "even",
                                 "--min-inputs", "10", "--fail-on", "confirmed", "--allow-errors"])
    assert result.exit_code == 0, result.output
    assert "1 harness errored in fuzz run 1" in result.output and "accepted by --allow-errors" in result.output
