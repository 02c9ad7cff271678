"""Transfer never proposes a name outside torch's public API, even one an older version stored."""

from __future__ import annotations

import pytest

from agent.transfer.rank import RankedCandidate
from agent.transfer.stage import load_index, run_transfer
from db import models
from db.queries import transfer as q
from db.store import Store
from fuzz_core.api_names import ApiRejected
from tests.db.fixtures import add_issue_with_pattern
from tests.fuzz_core.api_attacks import ATTACK_APIS

ACTIVATION = [{"name": "input", "role": "input", "kind": "tensor"}]


def _row(api: str) -> dict:
    # the bogus rows copy a real activation's semantics, so only the API check can keep them out
    return {"api": api, "category": "activation", "summary": "ReLU6 element-wise, min(max(0,x),6)",
            "parameters": ACTIVATION, "dtypes": ["float32", "float16"], "details": {}}


@pytest.mark.parametrize("api", ATTACK_APIS)
def test_a_candidate_naming_a_rejected_api_cannot_be_made(api: str) -> None:
    with pytest.raises(ApiRejected):
        RankedCandidate(api, 1.0, "looks similar", {})


def test_rejected_rows_in_the_stored_inventory_are_never_candidates(store: Store) -> None:
    pattern_id = add_issue_with_pattern(store)  # a torch.nn.functional.relu6 pattern
    with store.session() as session:
        q.upsert_semantics_rows(session, [_row("torch.nn.functional.relu6"), _row("torch.nn.functional.hardtanh")]
                                + [_row(api) for api in ATTACK_APIS])
    index, profiles = load_index(store)
    assert set(profiles) == {"torch.nn.functional.relu6", "torch.nn.functional.hardtanh"}
    summary = run_transfer(store, top_k=20)
    assert summary.per_pattern[pattern_id] == ["torch.nn.functional.hardtanh"]
    with store.session() as session:
        stored = {c.target_api for c in session.query(models.Candidate)}
    assert stored == {"torch.nn.functional.relu6", "torch.nn.functional.hardtanh"}
