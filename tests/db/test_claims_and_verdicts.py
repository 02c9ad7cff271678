"""Many drivers, one database: claims skip rows another driver holds, a verdict is written once per claim."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.exc import IntegrityError

from db import models
from db.queries import campaign as q
from db.store import Store
from tests.db.test_campaign_queries import _harness

RESULT = {"verdict": "passed", "reason": "ok", "evidence": {}, "repro": "", "signature": "s"}


def test_a_claim_being_taken_is_skipped_not_waited_for(store: Store) -> None:
    if store.engine.dialect.name != "postgresql":
        pytest.skip("row locks are PostgreSQL's; SQLite refuses the second driver instead")
    hid = _harness(store)
    with store.session() as first:
        assert q.claim(first, hid, q.start_run(first, "fuzz", {}))
        with store.session() as second:  # the first transaction still holds the row: skipped at once
            assert q.claim(second, hid, q.start_run(second, "fuzz", {})) is False


def test_a_verdict_is_refused_once_the_claim_has_moved_on(store: Store) -> None:
    hid = _harness(store)
    with store.session() as session:
        stale_run = q.start_run(session, "fuzz", {})
        q.claim(session, hid, stale_run)
        q.finish_run(session, stale_run, "killed", {})
    with store.session() as session:
        assert q.reclaim_stale(session, timedelta(seconds=60)) == 1
        new_run = q.start_run(session, "fuzz", {})
        assert q.claim(session, hid, new_run)
    with store.session() as session:
        assert q.record_result(session, hid, stale_run, **RESULT) is None
        assert q.record_result(session, hid, new_run, **RESULT) is not None
    with store.session() as session:
        findings = session.query(models.Finding).filter_by(harness_id=hid).all()
        assert [(f.run_id, f.attempt) for f in findings] == [(new_run, 2)]


def test_a_retried_write_finds_its_own_row(store: Store) -> None:
    hid = _harness(store)
    with store.session() as session:
        run_id = q.start_run(session, "fuzz", {})
        q.claim(session, hid, run_id)
    with store.session() as session:
        first = q.record_result(session, hid, run_id, variant="a", **RESULT)
    with store.session() as session:
        assert q.record_result(session, hid, run_id, variant="a", **RESULT) == first
        assert q.record_result(session, hid, run_id, variant="b", **RESULT) != first
    with store.session() as session:
        assert session.query(models.Finding).filter_by(harness_id=hid).count() == 2


def test_the_database_refuses_a_second_verdict_for_one_claim(store: Store) -> None:
    hid = _harness(store)
    with pytest.raises(IntegrityError):
        with store.session() as session:
            for _ in range(2):
                session.add(models.Finding(harness_id=hid, run_id=None, verdict="passed", attempt=1, variant="v"))
                session.flush()


def test_sqlite_refuses_a_second_live_driver(store: Store) -> None:
    with store.session() as session:
        live = q.start_run(session, "fuzz", {})
    with store.session() as session:
        if store.engine.dialect.name == "sqlite":
            with pytest.raises(q.DriverBusy, match=f"fuzz run {live} is still running.*PostgreSQL"):
                q.refuse_second_driver(session, timedelta(seconds=60))
        else:
            q.refuse_second_driver(session, timedelta(seconds=60))  # PostgreSQL shares the queue


def test_a_driver_whose_heartbeat_went_stale_no_longer_blocks_sqlite(store: Store) -> None:
    with store.session() as session:
        q.start_run(session, "fuzz", {})
    with store.session() as session:
        assert q.live_runs(session, "fuzz", timedelta(seconds=0)) == []
        q.refuse_second_driver(session, timedelta(seconds=0))
