"""The fuzz work queue: claims are exclusive, stale claims come back, results are stored."""

from __future__ import annotations

from datetime import timedelta

from db import models
from db.base import utcnow
from db.queries import campaign as q
from db.queries import transfer as tq
from db.store import Store
from tests.db.fixtures import add_issue_with_pattern


def _harness(store: Store) -> int:
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        [cand] = tq.add_candidates(session, pattern_id, [{"target_api": "torch.relu", "score": 0.9}])
        return tq.add_harness(session, cand.id, {"api": "torch.relu"}).id


def test_claim_is_exclusive(store: Store) -> None:
    hid = _harness(store)
    with store.session() as session:
        assert q.claim(session, hid) is True
    with store.session() as session:
        assert q.claim(session, hid) is False
        assert q.pending_harnesses(session) == []


def test_claims_of_a_live_run_are_kept_a_dead_runs_reclaimed(store: Store) -> None:
    hid = _harness(store)
    with store.session() as session:
        run_id = q.start_run(session, "fuzz", {})
        q.claim(session, hid, run_id)
    with store.session() as session:
        assert q.reclaim_stale(session, timedelta(minutes=1)) == 0
    with store.session() as session:  # its heartbeat stopped: the campaign was killed
        assert q.reclaim_stale(session, timedelta(minutes=1), now=utcnow() + timedelta(minutes=5)) == 1
        assert [h for h, _ in q.pending_harnesses(session)] == [hid]


def test_claims_of_an_ended_run_are_reclaimed(store: Store) -> None:
    hid = _harness(store)
    with store.session() as session:
        run_id = q.start_run(session, "fuzz", {})
        q.claim(session, hid, run_id)
        q.finish_run(session, run_id, "interrupted", {})
    with store.session() as session:
        assert q.reclaim_stale(session, timedelta(minutes=1)) == 1


def test_result_is_stored_and_counted(store: Store) -> None:
    hid = _harness(store)
    with store.session() as session:
        run_id = q.start_run(session, "fuzz", {"budget_s": 1})
        q.claim(session, hid, run_id)
        q.record_result(session, hid, run_id, verdict="confirmed", reason="r", evidence={"max_abs_diff": 1.0},
                        repro="print()", signature="sig")
        q.finish_run(session, run_id, "completed", {"tasks": 1})
    with store.session() as session:
        assert q.verdict_counts(session, run_id) == {"confirmed": 1}
        assert session.get(models.Harness, hid).status == "done"
        run = session.get(models.Run, run_id)
        assert run.exit_reason == "completed" and run.counters == {"tasks": 1} and run.ended_at is not None


def test_release_returns_an_unstarted_claim(store: Store) -> None:
    hid = _harness(store)
    with store.session() as session:
        q.claim(session, hid)
        q.release(session, hid)
    with store.session() as session:
        assert [h for h, _ in q.pending_harnesses(session)] == [hid]


def test_pending_order_covers_every_pattern_first(store: Store) -> None:
    ids: dict[tuple[int, str], int] = {}
    for number in (1, 2):
        pattern_id = add_issue_with_pattern(store, number=number)
        with store.session() as session:
            cands = tq.add_candidates(session, pattern_id, [
                {"target_api": "torch.relu", "score": 0.5},
                {"target_api": "torch.nn.functional.relu6", "score": 1.0, "status": "source"},
                {"target_api": "torch.hardtanh", "score": 0.9},
            ])
            for cand in cands:
                ids[(number, cand.target_api)] = tq.add_harness(session, cand.id, {"api": cand.target_api}).id
    with store.session() as session:
        order = [hid for hid, _ in q.pending_harnesses(session)]
    expected = [ids[(n, api)] for api in ("torch.nn.functional.relu6", "torch.hardtanh", "torch.relu") for n in (1, 2)]
    assert order == expected
