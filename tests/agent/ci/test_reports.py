"""CI results from a real database: the gate, JUnit XML and SARIF read back by their own libraries; a run whose
harnesses errored or that executed nothing fails the gate unless --allow-errors accepts it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sarif_pydantic
from junitparser import Error, Failure, JUnitXml, Skipped
from rich.console import Console

from agent.ci.reports import inputs_executed, judge_gate
from agent.cli.ci_opts import ci_results
from db.queries import campaign as q
from db.queries import transfer as tq
from db.store import Store
from db.queries.run_results import RunVerdict
from tests.db.fixtures import add_issue_with_pattern

SPEC = {"api": "torch.mm", "reference_mode": "eager", "test_mode": "dtype:float16", "kind": "Precision_Mismatch"}


def _run_with(store: Store, verdicts: list[tuple[str, str]], executions: dict[str, int] | None = None) -> int:
    """A fuzz run whose harnesses got these verdicts; `executions` is what a verdict's evidence counts."""
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        run_id = q.start_run(session, "fuzz", {})
        candidates = tq.add_candidates(session, pattern_id, [{"target_api": "torch.mm", "score": 0.9}])
        for verdict, reason in verdicts:
            hid = tq.add_harness(session, candidates[0].id, SPEC).id
            q.claim(session, hid, run_id)
            counted = (executions or {}).get(verdict)
            evidence = {} if counted is None else {"executions_total": counted}
            q.record_result(session, hid, run_id, verdict=verdict, reason=reason, evidence=evidence, repro="",
                            signature=f"torch.mm|{verdict}")
    return run_id


def _err(tmp_path: Path) -> tuple[Console, Path]:
    """A console whose lines land unwrapped in a file, read back after each print."""
    path = tmp_path / "err.txt"
    return Console(file=open(path, "w", buffering=1), width=400), path


def test_a_confirmed_finding_fails_the_gate_and_lands_in_both_files(store: Store, tmp_path: Path) -> None:
    run_id = _run_with(store, [("confirmed", "fp16 off by 3.0 \x1b[31m<&>"), ("passed", "ok"),
                               ("inconclusive", "few inputs")])
    junit, sarif = tmp_path / "out" / "junit.xml", tmp_path / "out" / "r.sarif"
    err = Console(file=open(tmp_path / "err.txt", "w"))
    assert ci_results(store, run_id, fail_on="confirmed", junit=junit, sarif=sarif, err=err) is True
    suite = next(iter(JUnitXml.fromfile(str(junit))))
    assert (suite.tests, suite.failures, suite.skipped) == (3, 1, 1)
    results = [type(r) for case in suite for r in case.result]
    assert Failure in results and Skipped in results
    log = sarif_pydantic.load(sarif)  # the file reads back as a SARIF 2.1.0 model
    data = json.loads(sarif.read_text())
    assert data["version"] == "2.1.0" and data["runs"][0]["invocations"][0]["executionSuccessful"] is False
    [result] = data["runs"][0]["results"]
    assert result["level"] == "error" and result["ruleId"] == "Precision_Mismatch" and "\x1b" not in result["message"]["text"]
    assert log.runs[0].results[0].rule_id == "Precision_Mismatch"
    assert "gate failed (--fail-on confirmed): 1 confirmed" in (tmp_path / "err.txt").read_text()


def test_a_suspicious_finding_passes_a_confirmed_gate_but_not_a_suspicious_one(store: Store, tmp_path: Path) -> None:
    run_id = _run_with(store, [("suspicious", "beyond tolerance, fp64 check inconclusive")])
    err = Console(file=open(tmp_path / "err.txt", "w"))
    assert ci_results(store, run_id, fail_on="confirmed", junit=None, sarif=None, err=err) is False
    assert ci_results(store, run_id, fail_on="suspicious", junit=None, sarif=None, err=err) is True


BROKEN = ("error", "harness spec does not load: unknown field no_such_field")


def test_an_errored_harness_fails_the_gate_and_the_log_says_so(store: Store, tmp_path: Path) -> None:
    run_id = _run_with(store, [("passed", "60 inputs agree"), BROKEN], executions={"passed": 60})
    err, err_path = _err(tmp_path)
    assert ci_results(store, run_id, fail_on="confirmed", junit=None, sarif=None, err=err) is True
    log = err_path.read_text()
    assert f"gate failed (--fail-on confirmed): 1 harness errored in fuzz run {run_id}" in log
    assert "--allow-errors to accept" in log and "no input was executed" not in log


def test_allow_errors_lets_an_errored_harness_pass_and_still_says_it(store: Store, tmp_path: Path) -> None:
    run_id = _run_with(store, [("passed", "60 inputs agree"), BROKEN], executions={"passed": 60})
    err, err_path = _err(tmp_path)
    assert ci_results(store, run_id, fail_on="confirmed", junit=None, sarif=None, err=err, allow_errors=True) is False
    log = err_path.read_text()
    assert "1 harness errored" in log and "accepted by --allow-errors" in log and "gate failed" not in log


def test_allow_errors_never_lets_a_confirmed_finding_pass(store: Store, tmp_path: Path) -> None:
    run_id = _run_with(store, [("confirmed", "fp16 off by 3.0"), BROKEN])
    err, _ = _err(tmp_path)
    assert ci_results(store, run_id, fail_on="confirmed", junit=None, sarif=None, err=err, allow_errors=True) is True


def test_a_run_that_compared_no_input_fails_the_gate(store: Store, tmp_path: Path) -> None:
    # the not_applicable harness counted 60 inputs the reference rejected: none of them was compared
    run_id = _run_with(store, [("not_applicable", "the reference rejected every input"),
                               ("inconclusive", "only 0 inputs executed")],
                       executions={"not_applicable": 60, "inconclusive": 0})
    err, err_path = _err(tmp_path)
    assert ci_results(store, run_id, fail_on="confirmed", junit=None, sarif=None, err=err) is True
    assert (f"gate failed (--fail-on confirmed): no input was executed in fuzz run {run_id} "
            "(2 harnesses: 1 inconclusive, 1 not_applicable; --allow-errors to accept)") in err_path.read_text()


def test_a_run_with_no_harness_at_all_fails_the_gate(store: Store, tmp_path: Path) -> None:
    run_id = _run_with(store, [])
    err, err_path = _err(tmp_path)
    assert ci_results(store, run_id, fail_on="suspicious", junit=None, sarif=None, err=err) is True
    assert f"no input was executed in fuzz run {run_id} (no harness ran;" in err_path.read_text()


def test_without_a_gate_errors_fail_nothing(store: Store, tmp_path: Path) -> None:
    run_id = _run_with(store, [BROKEN])
    err, err_path = _err(tmp_path)
    assert ci_results(store, run_id, fail_on=None, junit=tmp_path / "j.xml", sarif=None, err=err) is False
    assert err_path.read_text() == ""


def test_junit_names_each_errored_harness_and_the_empty_run_as_errors(store: Store, tmp_path: Path) -> None:
    run_id = _run_with(store, [BROKEN, ("not_applicable", "no valid input")])
    junit = tmp_path / "junit.xml"
    err, _ = _err(tmp_path)
    ci_results(store, run_id, fail_on="confirmed", junit=junit, sarif=None, err=err)
    suite = next(iter(JUnitXml.fromfile(str(junit))))
    assert (suite.tests, suite.errors, suite.skipped) == (3, 2, 1)
    errors = {r.type: r.message for case in suite for r in case.result if isinstance(r, Error)}
    assert errors["harness_error"].startswith("harness error: harness spec does not load")
    assert errors["nothing_executed"] == "no input was executed (2 harnesses: 1 error, 1 not_applicable)"
    properties = {p.name: p.value for p in suite.properties()}
    assert properties["transfuzz.inputs_executed"] == "0" and properties["transfuzz.harnesses_errored"] == "1"
    assert properties["transfuzz.gate_result"].startswith("failed: 1 harness errored (harness ")


def test_junit_of_a_run_that_executed_inputs_has_no_nothing_executed_case(store: Store, tmp_path: Path) -> None:
    run_id = _run_with(store, [("passed", "60 inputs agree")], executions={"passed": 60})
    junit = tmp_path / "junit.xml"
    err, _ = _err(tmp_path)
    assert ci_results(store, run_id, fail_on="confirmed", junit=junit, sarif=None, err=err) is False
    suite = next(iter(JUnitXml.fromfile(str(junit))))
    assert (suite.tests, suite.errors) == (1, 0)
    assert {p.name: p.value for p in suite.properties()}["transfuzz.gate_result"] == "passed"


def test_sarif_reports_errored_harnesses_as_error_notifications_not_findings(store: Store, tmp_path: Path) -> None:
    run_id = _run_with(store, [BROKEN])
    sarif = tmp_path / "r.sarif"
    err, _ = _err(tmp_path)
    ci_results(store, run_id, fail_on="confirmed", junit=None, sarif=sarif, err=err)
    sarif_pydantic.load(sarif)
    run = json.loads(sarif.read_text())["runs"][0]
    invocation = run["invocations"][0]
    assert run["results"] == [] and invocation["executionSuccessful"] is False
    by_id = {n["descriptor"]["id"]: n for n in invocation["toolExecutionNotifications"]}
    assert {n["level"] for n in by_id.values()} == {"error"}
    assert "harness spec does not load" in by_id["harness_error"]["message"]["text"]
    assert by_id["nothing_executed"]["message"]["text"] == (f"fuzz run {run_id}: no input was executed "
                                                             "(1 harness: 1 error)")
    descriptors = [d["id"] for d in run["tool"]["driver"]["notifications"]]
    assert all(descriptors[n["descriptor"]["index"]] == name for name, n in by_id.items())
    assert invocation["properties"]["gate"]["reasons"][0].startswith("1 harness errored")


def test_sarif_under_allow_errors_passes_but_keeps_the_error_notifications(store: Store, tmp_path: Path) -> None:
    run_id = _run_with(store, [BROKEN])
    sarif = tmp_path / "r.sarif"
    err, _ = _err(tmp_path)
    ci_results(store, run_id, fail_on="confirmed", junit=None, sarif=sarif, err=err, allow_errors=True)
    invocation = json.loads(sarif.read_text())["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is True
    assert sorted(n["descriptor"]["id"] for n in invocation["toolExecutionNotifications"]) == [
        "harness_error", "nothing_executed"]


@pytest.mark.parametrize("verdict", ["crash", "hang", "confirmed"])
def test_a_finding_counts_as_an_executed_input_even_without_a_recorded_count(verdict: str) -> None:
    # a crashed or hung worker dies before it reports how many inputs it ran
    found = RunVerdict(finding_id=1, harness_id=1, verdict=verdict, reason="", signature="", executions=0)
    assert inputs_executed(found) == 1
    assert not judge_gate(1, [found], "suspicious").nothing_executed


@pytest.mark.parametrize("verdict", ["error", "not_applicable"])
def test_error_and_not_applicable_count_no_input_whatever_they_tallied(verdict: str) -> None:
    assert inputs_executed(RunVerdict(finding_id=1, harness_id=1, verdict=verdict, reason="", signature="",
                                      executions=60)) == 0
