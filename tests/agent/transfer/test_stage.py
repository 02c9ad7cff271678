"""The transfer and harness stages on a real database: candidates, source re-check, specs."""

from __future__ import annotations

from agent.harness.stage import generate_harnesses
from agent.transfer.stage import run_transfer
from db import models
from db.queries import transfer as q
from db.store import Store
from tests.db.fixtures import add_issue_with_pattern

ACTIVATION = [{"name": "input", "role": "input", "kind": "tensor"}, {"name": "inplace", "role": "inplace", "kind": "bool"}]
SEMANTICS = [
    {"api": "torch.nn.functional.relu6", "category": "activation", "summary": "ReLU6 element-wise, min(max(0,x),6)",
     "parameters": ACTIVATION, "dtypes": ["float32", "float16"]},
    {"api": "torch.nn.functional.hardtanh", "category": "activation", "summary": "HardTanh element-wise clamp",
     "parameters": ACTIVATION, "dtypes": ["float32", "float16"]},
    {"api": "torch.bitwise_not", "category": "pointwise", "summary": "bitwise NOT of integer tensors",
     "parameters": ACTIVATION[:1], "dtypes": ["int64"]},
]


def _seed_inventory(store: Store) -> None:
    with store.session() as session:
        q.upsert_semantics_rows(session, [{**row, "details": {}} for row in SEMANTICS])


def test_transfer_stores_source_and_ranked_targets(store: Store) -> None:
    pattern_id = add_issue_with_pattern(store)
    _seed_inventory(store)
    summary = run_transfer(store, top_k=3)
    assert summary.patterns == 1 and summary.per_pattern[pattern_id] == ["torch.nn.functional.hardtanh"]
    with store.session() as session:
        rows = {c.target_api: c for c in session.query(models.Candidate)}
        assert rows["torch.nn.functional.relu6"].status == "source"
        assert rows["torch.nn.functional.hardtanh"].status == "proposed"
        assert session.get(models.Pattern, pattern_id).status == "transferred"
    assert run_transfer(store).patterns == 0  # nothing new to transfer


def test_vetoed_candidates_get_no_harness(store: Store) -> None:
    add_issue_with_pattern(store)
    _seed_inventory(store)
    summary = run_transfer(store, check=lambda pattern, cand: (False, "no", None))
    assert summary.vetoed == 1
    harnesses = generate_harnesses(store, frozenset({"torch.nn.functional.relu6"}))
    assert harnesses.harnesses == 1  # only the source re-check
    with store.session() as session:
        [harness] = session.query(models.Harness).all()
        assert harness.spec["api"] == "torch.nn.functional.relu6"
        assert harness.spec["input_source"] == "opinfo"
        assert harness.spec["trigger"] == {"special_values": ["nan"]}


def test_an_in_place_pattern_transfers_to_plain_ops_once_each(store: Store) -> None:
    # variant:inplace runs the in-place spelling itself: Tensor.mul_ and Tensor.div_ stand for torch.mul and
    # torch.div, and a method reached in both spellings is one candidate
    from agent.patterns import BugPattern, Mode, Oracle, Trigger

    pattern = BugPattern(kind="Layout_Mismatch", api="torch.Tensor.mul_", reference_mode=Mode(name="eager"),
                         test_mode=Mode(name="variant:inplace"), trigger=Trigger(), oracle=Oracle(tol=1e-5))
    pattern_id = add_issue_with_pattern(store, pattern)
    binary = [{"name": "input", "role": "input", "kind": "tensor"}, {"name": "other", "role": "input", "kind": "tensor"}]
    with store.session() as session:
        q.upsert_semantics_rows(session, [
            {"api": api, "category": "pointwise", "summary": f"element-wise {what}", "parameters": binary,
             "dtypes": ["float32"], "details": {"has_inplace": True}}
            for api, what in (("torch.Tensor.div_", "division, in place"), ("torch.Tensor.div", "division"))])
    summary = run_transfer(store, top_k=5)
    assert summary.per_pattern[pattern_id] == ["torch.div"]
    with store.session() as session:
        assert {c.target_api: c.status for c in session.query(models.Candidate)} == {
            "torch.mul": "source", "torch.div": "proposed"}
