"""The source re-check's outcome (Note [Source re-check]): the report's repro first, else the harness; closed: fixed."""

from __future__ import annotations

import pytest

from agent.transfer.source_recheck import ReproRun, decide, record_harness_verdict, record_repro_run, stored_recheck
from db import models
from db.queries import transfer as tq
from db.store import Store
from tests.db.fixtures import add_issue_with_pattern

TORCH = "2.13.0+cpu"
FAILS = ReproRun(status="reproduces", reason="its assertion failed (AssertionError: off by one)", exit_code=1,
                 torch=TORCH)
HOLDS = ReproRun(status="does_not_reproduce", reason="it ran clean and its own checks hold (assert)", exit_code=0,
                 torch=TORCH)
SILENT = ReproRun(status="no_verdict", reason="it ran clean, with no check of its own", exit_code=0, torch=TORCH)


def test_the_reports_repro_decides_over_the_harness() -> None:
    check = decide(repro=HOLDS, verdicts=["confirmed"], harness_reason="values differ", trigger_used=True,
                   issue_state="open", torch=TORCH)
    assert (check.outcome, check.basis, check.reproduces) == ("does_not_reproduce", "report_repro", False)
    assert check.summary == f"does not reproduce on torch {TORCH} (report's repro; issue open)"
    assert "harness: confirmed (values differ)" in check.detail

    check = decide(repro=FAILS, verdicts=["passed"], issue_state="closed", state_reason="completed", torch=TORCH)
    assert (check.outcome, check.basis) == ("reproduces", "report_repro")
    assert check.summary == f"reproduces on torch {TORCH} (report's repro)"


@pytest.mark.parametrize(("state", "reason", "outcome", "words"), [
    ("closed", "completed", "fixed",
     f"fixed in torch {TORCH} (no longer reproduces: report's repro; issue closed as completed)"),
    ("closed", None, "fixed", "issue closed, no close reason recorded"),
    ("closed", "not_planned", "does_not_reproduce", "issue closed as not planned"),
    ("open", None, "does_not_reproduce", f"does not reproduce on torch {TORCH}"),
])
def test_closed_and_no_longer_reproducing_is_fixed(state: str, reason: str | None, outcome: str, words: str) -> None:
    check = decide(repro=HOLDS, verdicts=[], issue_state=state, state_reason=reason, torch=TORCH)
    assert check.outcome == outcome and words in check.summary


def test_without_a_verdict_from_the_repro_the_harness_decides_and_says_how() -> None:
    check = decide(repro=SILENT, verdicts=["suspicious", "confirmed"], trigger_used=True, torch=TORCH)
    assert (check.outcome, check.basis) == ("reproduces", "harness")
    assert check.summary == f"reproduces on torch {TORCH} (harness with the reported trigger)"
    assert "report's repro ran; no verdict from the script" in check.detail

    generated = decide(repro=None, verdicts=["passed"], trigger_used=False, issue_state="closed", torch=TORCH)
    assert generated.outcome == "fixed" and "harness with generated inputs" in generated.summary


def test_doubt_stays_doubt() -> None:
    assert decide(repro=None, verdicts=[], torch=TORCH).outcome == "not_checked"
    unsandboxed = ReproRun(status="not_run", reason="no sandbox", torch=TORCH, retry=True)
    assert decide(repro=unsandboxed, verdicts=[], torch=TORCH).summary.startswith("not checked on torch")
    for verdicts in (["suspicious"], ["flaky"], ["not_applicable", "inconclusive", "error"]):
        check = decide(repro=SILENT, verdicts=verdicts, torch=TORCH)
        assert (check.outcome, check.basis, check.reproduces) == ("inconclusive", None, None)


def _source_harness(store: Store, pattern_id: int, trigger: dict) -> int:
    with store.session() as session:
        [source] = tq.add_candidates(session, pattern_id,
                                     [{"target_api": "torch.nn.functional.relu6", "status": "source"}])
        harness_id = tq.add_harness(session, source.id, {"trigger": trigger}).id
        tq.mark_pattern(session, pattern_id, status="transferred")
    return harness_id


@pytest.mark.parametrize(("verdicts", "expected"), [
    (["confirmed"], True), (["passed"], False), (["suspicious"], None), (["passed", "confirmed"], True),
    (["not_applicable"], None),
])
def test_harness_verdicts_are_stored_with_their_basis(store: Store, verdicts: list[str], expected: bool | None) -> None:
    pattern_id = add_issue_with_pattern(store)
    harness_id = _source_harness(store, pattern_id, {"special_values": ["nan"]})
    for verdict in verdicts:
        with store.session() as session:
            record_harness_verdict(session, harness_id, verdict, "why")
    with store.session() as session:
        pattern = session.get(models.Pattern, pattern_id)
        assert pattern.source_reproduces is expected
        check = stored_recheck(pattern.source_check)
        assert check is not None and check.verdicts == verdicts
        assert pattern.source_outcome == check.outcome
        assert pattern.source_basis == ("harness" if expected is not None else None)
        if expected is not None:
            assert "harness with the reported trigger" in check.summary


def test_a_later_harness_verdict_keeps_the_repros_answer(store: Store) -> None:
    pattern_id = add_issue_with_pattern(store)
    harness_id = _source_harness(store, pattern_id, {})
    with store.session() as session:
        record_repro_run(session, pattern_id, HOLDS)
    with store.session() as session:
        check = record_harness_verdict(session, harness_id, "confirmed", "values differ")
    assert check is not None and (check.outcome, check.basis) == ("does_not_reproduce", "report_repro")
    assert check.repro == HOLDS and check.verdicts == ["confirmed"]
    with store.session() as session:  # a harness that is not a source re-check leaves patterns alone
        [target] = tq.add_candidates(session, pattern_id, [{"target_api": "torch.nn.functional.hardtanh"}])
        other = tq.add_harness(session, target.id, {}).id
        assert record_harness_verdict(session, other, "confirmed", "x") is None
