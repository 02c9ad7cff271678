"""CI results from a real database: the gate, JUnit XML and SARIF read back by their own libraries."""

from __future__ import annotations

import json
from pathlib import Path

import sarif_pydantic
from junitparser import Failure, JUnitXml, Skipped
from rich.console import Console

from agent.cli.ci_opts import ci_results
from db.queries import campaign as q
from db.queries import transfer as tq
from db.store import Store
from tests.db.fixtures import add_issue_with_pattern

SPEC = {"api": "torch.mm", "reference_mode": "eager", "test_mode": "dtype:float16", "kind": "Precision_Mismatch"}


def _run_with(store: Store, verdicts: list[tuple[str, str]]) -> int:
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        run_id = q.start_run(session, "fuzz", {})
        candidates = tq.add_candidates(session, pattern_id, [{"target_api": "torch.mm", "score": 0.9}])
        for verdict, reason in verdicts:
            hid = tq.add_harness(session, candidates[0].id, SPEC).id
            q.claim(session, hid, run_id)
            q.record_result(session, hid, run_id, verdict=verdict, reason=reason, evidence={}, repro="",
                            signature=f"torch.mm|{verdict}")
    return run_id


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
