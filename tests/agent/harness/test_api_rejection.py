"""No harness spec is written for a target outside torch's public API."""

from __future__ import annotations

import pytest

from agent.harness.generate import build_spec
from agent.harness.stage import generate_harnesses
from db import models
from db.queries import transfer as q
from db.store import Store
from fuzz_core.api_names import ApiRejected
from tests.db.fixtures import RELU6_PATTERN, add_issue_with_pattern
from tests.fuzz_core.api_attacks import ATTACK_APIS


@pytest.mark.parametrize("api", ATTACK_APIS)
def test_build_spec_refuses_a_rejected_target(api: str) -> None:
    with pytest.raises(ApiRejected):
        build_spec(RELU6_PATTERN, api, {}, in_opinfo=False, seed_key=1)


def test_a_stale_candidate_row_with_a_rejected_target_is_skipped_with_its_reason(store: Store) -> None:
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:  # as an older version could have stored it
        q.add_candidates(session, pattern_id, [{"target_api": "torch.os.system", "score": 1.0, "status": "proposed",
                                                "rationale": "similar", "adapted_trigger": {}}])
    summary = generate_harnesses(store, frozenset())
    assert summary.harnesses == 0 and summary.skipped == 1
    with store.session() as session:
        [candidate] = session.query(models.Candidate).all()
        assert candidate.status == "no_harness" and "re-exported module os" in candidate.rationale
        assert session.query(models.Harness).count() == 0
