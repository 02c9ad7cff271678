"""Transfer evaluation: sibling ranks, the random baseline, hit@k/MRR, groups files, stored findings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.eval.transfer import (GroupsFileError, RootCauseGroup, SourcePattern, evaluate_transfer, load_groups,
                                 stored_findings)
from agent.patterns import BugPattern, Mode, Oracle, Trigger
from agent.transfer.profile import ApiProfile, profile_from_semantics
from agent.transfer.rank import TransferIndex
from db import models
from db.store import Store
from tests.db.fixtures import add_issue_with_pattern

UNARY = [{"name": "input", "role": "input", "kind": "tensor"}]
FLOATS = ["float16", "float32", "float64"]


def _profile(api: str, summary: str, dtypes: list[str] = FLOATS, params: list[dict] = UNARY) -> ApiProfile:
    return profile_from_semantics(api, "elementwise_unary", summary, params, dtypes, {})


INVENTORY = [
    _profile("torch.logit", "logit log of p over one minus p", params=UNARY + [{"name": "eps", "role": "eps", "kind": "float"}]),
    _profile("torch.log", "natural logarithm log of input"),
    _profile("torch.log2", "logarithm to base two log of input"),
    _profile("torch.sin", "sine of input"),
    _profile("torch.cos", "cosine of input"),
    _profile("torch.bitwise_not", "bitwise not of input", dtypes=["int64"]),
]
GROUP = RootCauseGroup(id="logit", source="torch.logit", kind="Precision_Mismatch", test_mode="dtype:float16",
                       siblings=["torch.log", "torch.log2", "torch.bitwise_not", "torch.erf"])


def _evaluate(top_k: int = 1, **kw):  # type: ignore[no-untyped-def]
    return evaluate_transfer([GROUP], TransferIndex(INVENTORY), samples=kw.pop("samples", {}),
                             source_profile=lambda api: None, top_k=top_k, **kw)


def test_siblings_are_ranked_against_a_random_pick_among_gated_apis() -> None:
    result = _evaluate()
    [group] = result.groups
    assert group.pattern_from == "synthesised" and group.candidates == 4  # log, log2, sin, cos pass the gates
    ranks = {s.api: s for s in group.siblings}
    assert ranks["torch.log"].rank == 1 and ranks["torch.log2"].rank == 2
    assert ranks["torch.log"].random_rank == 2.5 and ranks["torch.log2"].lift == 1.25
    assert ranks["torch.bitwise_not"].rank is None and ranks["torch.bitwise_not"].gated_out == "does not support float16"
    assert ranks["torch.erf"].gated_out == "not in the inventory"


def test_hits_mrr_and_their_random_baselines() -> None:
    result = _evaluate(top_k=1)
    assert result.pairs == 4 and result.ranked_pairs == 2
    assert result.hits_at_k == 0.25  # log at rank 1 of 4 pairs
    assert result.random_hits_at_k == round(2 * (1 / 4) / 4, 4)
    assert result.mrr == round((1 + 1 / 2) / 4, 4)
    harmonic = (1 + 1 / 2 + 1 / 3 + 1 / 4) / 4
    assert result.random_mrr == round(2 * harmonic / 4, 4)
    assert result.mrr_lift == round(((1 + 1 / 2) / 4) / (2 * harmonic / 4), 3)


def test_a_sample_pattern_is_used_and_its_eps_does_not_gate() -> None:
    logit = BugPattern(kind="Precision_Mismatch", api="torch.logit", reference_mode=Mode(name="eager"),
                       test_mode=Mode(name="dtype:float16"), trigger=Trigger(params={"eps": "1e-06"}), oracle=Oracle())
    samples = {("torch.logit", "Precision_Mismatch", "dtype:float16"): SourcePattern(logit, "sample issue #108")}
    [group] = _evaluate(samples=samples).groups
    assert group.pattern_from == "sample issue #108" and group.trigger_params == {"eps": "1e-06"}
    assert [s.rank for s in group.siblings[:2]] == [1, 2]


def test_share_confirmed_counts_fuzzed_siblings_only() -> None:
    verdicts = {("torch.log", "dtype:float16"): (True, True), ("torch.log2", "dtype:float16"): (True, False)}
    result = _evaluate(findings=lambda api, mode: verdicts.get((api, mode), (False, False)))
    assert result.groups[0].share_confirmed == 0.5 and result.share_confirmed == 0.5
    assert _evaluate().share_confirmed is None


def test_stored_findings_read_verdicts_by_api_and_test_mode(store: Store) -> None:
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        candidate = models.Candidate(pattern_id=pattern_id, target_api="torch.log", status="proposed")
        session.add(candidate)
        session.flush()
        for api, verdict in (("torch.log", "passed"), ("torch.log", "confirmed"), ("torch.log2", "passed")):
            harness = models.Harness(candidate_id=candidate.id, spec={"api": api, "test_mode": "dtype:float16"})
            session.add(harness)
            session.flush()
            session.add(models.Finding(harness_id=harness.id, verdict=verdict))
    lookup = stored_findings(store)
    assert lookup("torch.log", "dtype:float16") == (True, True)
    assert lookup("torch.log2", "dtype:float16") == (True, False)
    assert lookup("torch.log", "dtype:bfloat16") == (False, False)


def _groups_file(tmp_path: Path, groups: object) -> Path:
    path = tmp_path / "groups.json"
    path.write_text(json.dumps({"groups": groups}) if not isinstance(groups, str) else groups, encoding="utf-8")
    return path


def test_the_shipped_groups_file_loads() -> None:
    groups = load_groups(Path(__file__).resolve().parents[3] / "examples" / "eval" / "transfer_groups.json")
    by_id = {g.id: g for g in groups}
    assert by_id["logit-log-fp16"].siblings == ["torch.log", "torch.log1p", "torch.log2", "torch.log10"]
    assert all(g.evidence for g in groups)


@pytest.mark.parametrize(("content", "message"), [
    ("{\"groups\": [", "not JSON (line 1"),
    ([{**GROUP.model_dump(mode="json"), "siblings": ["os.system"]}], "groups.0.siblings"),
    ([{**GROUP.model_dump(mode="json"), "test_mode": "dtype:float8"}], "unknown mode"),
    ([GROUP.model_dump(mode="json")] * 2, "group ids repeat"),
    ([], "groups"),
])
def test_a_bad_groups_file_names_the_problem(tmp_path: Path, content: object, message: str) -> None:
    with pytest.raises(GroupsFileError, match=message.replace("(", r"\(")):
        load_groups(_groups_file(tmp_path, content))
