"""Source re-check rows: which harness re-checks a pattern, the stored outcome, and the counts per outcome."""

from __future__ import annotations

import pytest

from db import models
from db.queries import transfer as tq
from db.queries.source_recheck import save_source_recheck, source_harness, source_reports, source_state, state_reason
from db.queries.summary import pipeline_counts
from db.store import Store
from tests.db.fixtures import add_issue_with_pattern


def test_outcome_is_stored_and_counted(store: Store) -> None:
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        source, target = tq.add_candidates(session, pattern_id, [
            {"target_api": "torch.nn.functional.relu6", "status": "source"},
            {"target_api": "torch.nn.functional.hardtanh"}])
        source_harness_id = tq.add_harness(session, source.id, {"trigger": {"special_values": ["nan"]}}).id
        target_harness_id = tq.add_harness(session, target.id, {}).id
        tq.mark_pattern(session, pattern_id, status="transferred")
    with store.session() as session:
        assert source_harness(session, source_harness_id) == (pattern_id, {"special_values": ["nan"]})
        assert source_harness(session, target_harness_id) is None
        assert pipeline_counts(session)["source_rechecks"] == {"not_checked": 1}
        assert [r.pattern_id for r in source_reports(session)] == [pattern_id]
        save_source_recheck(session, pattern_id, {"outcome": "fixed", "summary": "fixed in torch X"},
                            outcome="fixed", basis="report_repro", reproduces=False)
    with store.session() as session:
        pattern = session.get(models.Pattern, pattern_id)
        assert (pattern.source_outcome, pattern.source_basis, pattern.source_reproduces) == (
            "fixed", "report_repro", False)
        assert pipeline_counts(session)["source_rechecks"] == {"fixed": 1}
        assert source_state(session, pattern_id).source_check["summary"] == "fixed in torch X"
        with pytest.raises(ValueError, match="unknown source re-check outcome"):
            save_source_recheck(session, pattern_id, {}, outcome="yes", basis=None, reproduces=True)


def test_close_reason_from_either_source() -> None:
    assert state_reason({"state_reason": "completed"}) == "completed"
    assert state_reason({"stateReason": "NOT_PLANNED"}) == "not_planned"  # gh issue list --json
    assert state_reason({"state_reason": None}) is None and state_reason({}) is None
