"""Source re-checks: a reported bug reproduces only on a clear verdict; doubt stays doubt."""

from __future__ import annotations

import pytest

from db import models
from db.queries import transfer as tq
from db.queries.summary import pipeline_counts, record_source_recheck
from db.store import Store
from tests.db.fixtures import add_issue_with_pattern


@pytest.mark.parametrize(("verdicts", "expected"), [
    (["confirmed"], True), (["passed"], False), (["suspicious"], None), (["passed", "confirmed"], True),
    (["not_applicable"], None),
])
def test_source_recheck_flag(store: Store, verdicts: list[str], expected: bool | None) -> None:
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        [source] = tq.add_candidates(session, pattern_id, [{"target_api": "torch.nn.functional.relu6", "status": "source"}])
        harness_id = tq.add_harness(session, source.id, {}).id
        tq.mark_pattern(session, pattern_id, status="transferred")
    for verdict in verdicts:
        with store.session() as session:
            record_source_recheck(session, harness_id, verdict, "why")
    with store.session() as session:
        pattern = session.get(models.Pattern, pattern_id)
        assert pattern.source_reproduces is expected
        assert pattern.source_check["verdicts"] == verdicts
        assert pipeline_counts(session)["source_rechecks"] == {str(expected): 1}
