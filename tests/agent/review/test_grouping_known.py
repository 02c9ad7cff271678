"""Root-cause groups and "already reported?" matching, on real finding records and real OpInfo."""

from __future__ import annotations

from datetime import datetime, timezone

from agent.review.grouping import group_by_root_cause, op_family
from agent.review.known import opinfo_entries, score_issue
from db.queries.findings import FindingRecord
from db.queries.known import IssueMention


def _finding(fid: int, api: str, evidence: dict) -> FindingRecord:
    spec = {"api": api, "reference_mode": "eager", "test_mode": "compile:inductor", "kind": "Compile_Eager_Mismatch"}
    return FindingRecord(id=fid, harness_id=fid, run_id=None, verdict="confirmed", reason="", evidence=evidence,
                         repro="", signature=f"{api}|eager->compile:inductor|Compile_Eager_Mismatch|value:[0]",
                         review_status="new", created_at=datetime.now(timezone.utc), harness_spec=spec)


EMPTY = {"input": {"tensors": [{"shape": [0], "dtype": "torch.float32", "stride": [1], "contiguous": True}]}}


def test_var_mean_and_std_mean_on_empty_tensors_are_one_group() -> None:
    groups = group_by_root_cause([_finding(1, "torch.var_mean", EMPTY), _finding(2, "torch.std_mean", EMPTY),
                                  _finding(3, "torch.var_mean", {"input": {"tensors": [{"shape": [3]}]}})])
    assert [g.apis for g in groups] == [["torch.std_mean", "torch.var_mean"], ["torch.var_mean"]]
    assert "empty input" in groups[0].cause.symptom


def test_localised_op_wins_over_the_api_family() -> None:
    localised = {"first_divergent_op": {"level": "op", "name": "aten.sum.dim_IntList"}}
    groups = group_by_root_cause([_finding(1, "torch.mean", localised), _finding(2, "torch.sum", localised)])
    assert len(groups) == 1 and groups[0].cause.locus == "op family sum (first diverging op aten.sum)" and groups[0].cause.from_localisation
    assert op_family("torch.special.logit") == op_family("torch.logit") == "logit"


def test_issue_needs_the_api_and_a_mode_or_symptom_word() -> None:
    hit = IssueMention("pytorch/pytorch", 123, "torch.compile gives wrong result for fmod", "", "closed", [])
    noise = IssueMention("pytorch/pytorch", 124, "docs typo", "see torch.fmod", "open", [])
    match = score_issue(hit, ["torch.fmod"], ["eager", "compile:inductor"], ["value"])
    assert match is not None and match.url == "https://github.com/pytorch/pytorch/issues/123"
    assert score_issue(noise, ["torch.fmod"], ["eager", "compile:inductor"], ["value"]) is None


def test_opinfo_skips_are_found_for_the_mode_and_dtype() -> None:
    entries = opinfo_entries("torch.fmod", "layout:noncontiguous", "bfloat16")
    assert any(e.kind == "skip" and "contig" in e.test for e in entries)
    assert opinfo_entries("torch.fmod", "layout:noncontiguous", "float32") == []
