"""Finding queries on a real database: lineage joins, filters, decisions, signature groups."""

from __future__ import annotations

import pytest

from db.models import Finding, Review
from db.queries.findings import (
    FindingNotFound,
    findings_for_export,
    get_finding,
    group_by_signature,
    list_findings,
    record_review,
    signature_counts,
)
from db.store import Store
from tests.agent.review.rows import COMPILE_SIGNATURE, RIGHT_REPRO, add_finding, build_lineage


def _populate(store: Store) -> dict[str, int]:
    with store.session() as session:
        rows = build_lineage(session)
        ids = {
            "a": add_finding(session, rows.harness_id),
            "b": add_finding(session, rows.harness_id, max_abs_diff=2.0),
            "passed": add_finding(session, rows.harness_id, verdict="passed", signature="", repro=RIGHT_REPRO),
            "direct": add_finding(
                session, rows.direct_harness_id, signature="torch.sigmoid|eager/jit.trace|JIT_Eager_Mismatch|value"
            ),
            "unsigned": add_finding(session, rows.direct_harness_id, verdict="suspicious", signature=""),
        }
    return ids


def test_lineage_join_reaches_the_source_issue(store: Store) -> None:
    ids = _populate(store)
    with store.session() as session:
        record = get_finding(session, ids["a"])
    assert record.issue is not None and record.issue.number == 123456
    assert record.pattern is not None and record.pattern.api == "torch.nn.functional.gelu"
    assert record.pattern.formal.startswith("Compile_Eager_Mismatch ::= ")
    assert record.candidate is not None and record.candidate.target_api == "torch.relu"
    assert record.harness_spec["test_mode"] == "compile:inductor"
    assert record.evidence["backend_ablation"]["inductor"] == "mismatch"


def test_harness_without_candidate_has_no_lineage_but_is_listed(store: Store) -> None:
    ids = _populate(store)
    with store.session() as session:
        record = get_finding(session, ids["direct"])
        everything = list_findings(session)
    assert record.candidate is None and record.pattern is None and record.issue is None
    assert record.harness_spec["api"] == "torch.sigmoid"
    assert [f.id for f in everything] == sorted(ids.values())


def test_filters_by_verdict_and_review_status(store: Store) -> None:
    ids = _populate(store)
    with store.session() as session:
        record_review(session, ids["b"], decision="accepted", reviewer="ann")
    with store.session() as session:
        confirmed = list_findings(session, verdicts=["confirmed"])
        unreviewed_confirmed = list_findings(session, verdicts=["confirmed"], review_statuses=["unreviewed"])
        several = list_findings(session, verdicts=["passed", "suspicious"])
        limited = list_findings(session, limit=2)
    assert [f.id for f in confirmed] == [ids["a"], ids["b"], ids["direct"]]
    assert [f.id for f in unreviewed_confirmed] == [ids["a"], ids["direct"]]
    assert [f.id for f in several] == [ids["passed"], ids["unsigned"]]
    assert len(limited) == 2
    with store.session() as session, pytest.raises(ValueError, match="unknown verdict 'bogus'"):
        list_findings(session, verdicts=["bogus"])


def test_decisions_are_stored_with_history_and_time(store: Store) -> None:
    ids = _populate(store)
    with store.session() as session:
        record_review(session, ids["a"], decision="accepted", reviewer="ann", note="real")
    with store.session() as session:
        record_review(session, ids["a"], decision="rejected", reviewer="bob", note="within fp64 error")
    with store.session() as session:
        record = get_finding(session, ids["a"])
        stored = session.get(Finding, ids["a"])
        assert stored is not None and stored.review_status == "rejected"
        assert session.query(Review).count() == 2
    assert record.review_status == "rejected"
    assert [(r.decision, r.reviewer, r.note) for r in record.reviews] == [
        ("accepted", "ann", "real"),
        ("rejected", "bob", "within fp64 error"),
    ]
    assert all(r.created_at is not None for r in record.reviews)
    assert record.reviews[0].created_at <= record.reviews[1].created_at


def test_unknown_finding_and_bad_decision(store: Store) -> None:
    _populate(store)
    with store.session() as session:
        with pytest.raises(FindingNotFound, match="no finding with id 999"):
            get_finding(session, 999)
        with pytest.raises(FindingNotFound):
            record_review(session, 999, decision="accepted", reviewer="ann")
        with pytest.raises(ValueError, match="unknown decision"):
            record_review(session, 1, decision="maybe", reviewer="ann")
    with store.session() as session:
        assert session.query(Review).count() == 0


def test_export_selection_confirmed_vs_accepted(store: Store) -> None:
    ids = _populate(store)
    with store.session() as session:
        record_review(session, ids["a"], decision="rejected", reviewer="ann", note="noise")
        record_review(session, ids["unsigned"], decision="accepted", reviewer="ann")
    with store.session() as session:
        confirmed = [f.id for f in findings_for_export(session, "confirmed")]
        accepted = [f.id for f in findings_for_export(session, "accepted")]
        with pytest.raises(ValueError, match="unknown export status"):
            findings_for_export(session, "everything")
    # A rejected finding never leaves as "confirmed", whatever its verdict.
    assert confirmed == [ids["b"], ids["direct"]]
    assert accepted == [ids["unsigned"]]


def test_grouping_by_signature(store: Store) -> None:
    ids = _populate(store)
    with store.session() as session:
        groups = group_by_signature(list_findings(session))
        counts = signature_counts(session)
        confirmed_counts = signature_counts(session, verdicts=["confirmed"])
    by_key = {g.key: [f.id for f in g.findings] for g in groups}
    assert by_key[COMPILE_SIGNATURE] == [ids["a"], ids["b"]]
    # Findings without a signature are never merged with each other.
    assert by_key[f"finding:{ids['passed']}"] == [ids["passed"]]
    assert by_key[f"finding:{ids['unsigned']}"] == [ids["unsigned"]]
    assert len(groups) == 4
    assert [g.findings[0].id for g in groups] == sorted(g.findings[0].id for g in groups)
    assert counts == {COMPILE_SIGNATURE: 2, "torch.sigmoid|eager/jit.trace|JIT_Eager_Mismatch|value": 1}
    assert confirmed_counts == counts
