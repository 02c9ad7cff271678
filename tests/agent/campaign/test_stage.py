"""The fuzz stage on a real database and real workers: results stored, broken specs are tool errors."""

from __future__ import annotations

import time
from functools import partial

from agent.campaign.stage import CampaignConfig, run_campaign
from db import models
from db.queries import transfer as tq
from db.store import Store
from fuzz_core import WorkerPool
from tests.db.fixtures import add_issue_with_pattern

INPUTS = {"args": [{"kind": "tensor", "tensor": {"shape": [4, 6]}}]}
GOOD = {"api": "torch.relu", "reference_mode": "eager", "test_mode": "layout:noncontiguous",
        "input_source": "described", "inputs": INPUTS, "seed": 3, "kind": "Layout_Mismatch"}


def test_campaign_stores_every_result_and_survives_a_broken_spec(store: Store, tmp_path) -> None:
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        good, bad = tq.add_candidates(session, pattern_id, [{"target_api": "torch.relu", "score": 0.9},
                                                            {"target_api": "torch.nope", "score": 0.8}])
        good_id = tq.add_harness(session, good.id, GOOD).id
        bad_id = tq.add_harness(session, bad.id, {"api": "torch.nope", "no_such_field": 1}).id
    config = CampaignConfig(budget_s=20, workers=1, min_harness_budget_s=1, workdir=str(tmp_path))
    summary = run_campaign(store, config, pool_factory=partial(WorkerPool, preload_opinfo=False))
    assert summary.exit_reason == "completed" and summary.left_pending == 0
    assert summary.verdicts == {"passed": 1, "error": 1}
    with store.session() as session:
        findings = {f.harness_id: f for f in session.query(models.Finding)}
        assert findings[good_id].verdict == "passed" and findings[good_id].run_id == summary.run_id
        assert findings[bad_id].verdict == "error" and "does not load" in findings[bad_id].reason
        run = session.get(models.Run, summary.run_id)
        assert run.counters["verdict:passed"] == 1 and run.exit_reason == "completed"


def test_campaign_refuses_a_stored_spec_that_carries_code(store: Store, tmp_path) -> None:
    """Note [No stored code]: code in a database row is refused, however valid it looks."""
    pattern_id = add_issue_with_pattern(store)
    marker = tmp_path / "ran"
    code = f"def make_inputs(seed):\n    open({str(marker)!r}, 'w').close()\n    return (torch.ones(3),), {{}}\n"
    with store.session() as session:
        (candidate,) = tq.add_candidates(session, pattern_id, [{"target_api": "torch.relu", "score": 0.9}])
        hid = tq.add_harness(session, candidate.id, {**GOOD, "input_source": "code", "code": code, "inputs": None}).id
    config = CampaignConfig(budget_s=10, workers=1, min_harness_budget_s=1, workdir=str(tmp_path))
    summary = run_campaign(store, config, pool_factory=partial(WorkerPool, preload_opinfo=False))
    assert summary.verdicts == {"error": 1} and not marker.exists()
    with store.session() as session:
        finding = session.query(models.Finding).filter_by(harness_id=hid).one()
        assert "stored specs never carry code" in finding.reason


def test_a_pass_on_too_few_inputs_is_inconclusive_and_retried_by_the_next_campaign(store: Store, tmp_path) -> None:
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        (candidate,) = tq.add_candidates(session, pattern_id, [{"target_api": "torch.relu", "score": 0.9}])
        hid = tq.add_harness(session, candidate.id, GOOD).id
    config = CampaignConfig(budget_s=8, workers=1, min_harness_budget_s=1, workdir=str(tmp_path),
                            min_inputs=10**9, scheduler="even")
    first = run_campaign(store, config, pool_factory=partial(WorkerPool, preload_opinfo=False))
    assert first.verdicts == {"inconclusive": 1} and first.left_pending == 1
    with store.session() as session:
        finding = session.query(models.Finding).filter_by(harness_id=hid).one()
        assert "a pass needs 1000000000" in finding.reason and finding.evidence["executions_total"] > 0
        assert session.get(models.Harness, hid).status == "pending"
    second = run_campaign(store, config, pool_factory=partial(WorkerPool, preload_opinfo=False))
    assert second.harnesses == 1 and second.verdicts == {"inconclusive": 1}


def test_halving_gives_a_harness_more_rounds_until_it_has_enough_inputs(store: Store, tmp_path) -> None:
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        (candidate,) = tq.add_candidates(session, pattern_id, [{"target_api": "torch.relu", "score": 0.9}])
        hid = tq.add_harness(session, candidate.id, {**GOOD, "max_executions": 20}).id
    config = CampaignConfig(budget_s=30, workers=1, min_harness_budget_s=1, workdir=str(tmp_path), min_inputs=50,
                            scheduler="halving")
    summary = run_campaign(store, config, pool_factory=partial(WorkerPool, preload_opinfo=False))
    assert summary.verdicts == {"passed": 1} and summary.rounds >= 3
    with store.session() as session:
        finding = session.query(models.Finding).filter_by(harness_id=hid).one()
        assert finding.evidence["rounds"] >= 3 and finding.evidence["executions_total"] >= 50
        assert session.get(models.Harness, hid).status == "done"


def test_max_executions_bounds_the_work_and_the_campaign_ends_before_its_cap(store: Store, tmp_path) -> None:
    """Work bounded by inputs: every harness stops at max_executions (over all its rounds), so the campaign
    completes on its own with the time budget only a cap; halving gives no round past the bound."""
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        (candidate,) = tq.add_candidates(session, pattern_id, [{"target_api": "torch.relu", "score": 0.9}])
        ids = [tq.add_harness(session, candidate.id, {**GOOD, "seed": seed}).id for seed in (3, 4)]
    for scheduler in ("even", "halving"):
        config = CampaignConfig(budget_s=3600, workers=1, min_harness_budget_s=1, workdir=str(tmp_path),
                                min_inputs=10, max_executions=40, scheduler=scheduler)
        summary = run_campaign(store, config, pool_factory=partial(WorkerPool, preload_opinfo=False))
        assert summary.exit_reason == "completed" and summary.verdicts == {"passed": 2}, (scheduler, summary)
        assert summary.executions == 80
        with store.session() as session:
            for finding in session.query(models.Finding).filter_by(run_id=summary.run_id):
                assert finding.evidence["executions_total"] == 40 and finding.evidence["rounds"] == 1
            for hid in ids:  # passed: done; put them back for the other scheduler
                harness = session.get(models.Harness, hid)
                assert harness.status == "done"
                harness.status = "pending"


def test_every_worker_starts_a_harness_even_when_the_executor_outlasts_the_budget(store: Store, tmp_path) -> None:
    """An executor that takes longer to start than the whole budget (a Ray instance on a busy machine) still
    runs one harness per worker: each campaign decides work; the others stay pending, never claimed."""
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        (candidate,) = tq.add_candidates(session, pattern_id, [{"target_api": "torch.relu", "score": 0.9}])
        ids = [tq.add_harness(session, candidate.id, {**GOOD, "seed": seed}).id for seed in (3, 4, 5)]
    budget_s = 0.5

    class SlowToStart(WorkerPool):
        def __enter__(self) -> WorkerPool:
            time.sleep(budget_s + 0.2)  # start-up alone outlasts the campaign's budget
            return super().__enter__()

    config = CampaignConfig(budget_s=budget_s, workers=2, min_harness_budget_s=1, workdir=str(tmp_path),
                            min_inputs=1, scheduler="even")
    summary = run_campaign(store, config, pool_factory=partial(SlowToStart, preload_opinfo=False))
    assert summary.exit_reason == "budget" and summary.harnesses == 2 and summary.verdicts == {"passed": 2}
    assert summary.left_pending == 1
    with store.session() as session:
        statuses = sorted(session.get(models.Harness, hid).status for hid in ids)
        assert statuses == ["done", "done", "pending"]
        assert session.get(models.Harness, ids[2]).attempts == 0  # the third was never claimed


def test_a_database_blink_in_the_result_hook_counts_the_task_once(store: Store, tmp_path) -> None:
    """The hook writes too (the pipeline folds source re-checks in); when the database goes away under it, the
    hook runs again, but the result it follows is neither stored nor counted a second time."""
    from sqlalchemy.exc import OperationalError

    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        (candidate,) = tq.add_candidates(session, pattern_id, [{"target_api": "torch.relu", "score": 0.9}])
        tq.add_harness(session, candidate.id, GOOD)
    calls: list[int] = []

    def blinks_once(harness_id: int, result) -> None:  # type: ignore[no-untyped-def]
        calls.append(harness_id)
        if len(calls) == 1:
            raise OperationalError("UPDATE source_rechecks", {}, Exception("server closed the connection"))

    config = CampaignConfig(budget_s=3600, workers=1, min_harness_budget_s=1, workdir=str(tmp_path), min_inputs=10,
                            max_executions=40, scheduler="even")
    summary = run_campaign(store, config, on_result=blinks_once,
                           pool_factory=partial(WorkerPool, preload_opinfo=False))
    assert len(calls) == 2 and summary.verdicts == {"passed": 1}
    with store.session() as session:
        run = session.get(models.Run, summary.run_id)
        assert session.query(models.Finding).count() == 1
        assert run.counters["tasks"] == 1 and run.counters["verdict:passed"] == 1
