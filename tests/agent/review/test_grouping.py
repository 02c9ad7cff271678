"""One root-cause grouping (agent/review/grouping.py) on findings stored in a real database."""

from __future__ import annotations

import inspect

import pytest
import torch._refs

from agent.review.grouping import BUILT_ON, group_by_root_cause, groups_by_finding, op_family
from db.queries.findings import list_findings
from db.store import Store
from tests.agent.review.var_family import build_var_family


@pytest.fixture
def family(store: Store):
    with store.session() as session:
        return build_var_family(session)


def _groups(store: Store, **filters):
    with store.session() as session:
        return group_by_root_cause(list_findings(session, **filters))


def test_var_std_var_mean_std_mean_from_one_overflow_are_one_group(store: Store, family) -> None:
    ids = family.finding_ids
    by_id = groups_by_finding(_groups(store))
    overflow = by_id[ids["var"]]
    assert [f.id for f in overflow.findings] == [ids["var"], ids["std"], ids["var_mean"], ids["std_mean"],
                                                 ids["var_rejected"]]
    assert overflow.apis == ["torch.std", "torch.std_mean", "torch.var", "torch.var_mean"]
    assert overflow.verdict == "confirmed" and overflow.label == f"g{ids['var']}"
    assert overflow.cause.text == (f"NaN/Inf mismatch, eager vs compile:inductor; op family var; from the report of"
                                   f" torch.var (pytorch/pytorch#112, pattern {family.pattern_id})")


def test_the_same_report_in_another_op_is_another_group(store: Store, family) -> None:
    by_id = groups_by_finding(_groups(store))
    sum_group = by_id[family.finding_ids["sum_overflow"]]
    assert sum_group is not by_id[family.finding_ids["var"]] and sum_group.size == 1
    assert sum_group.cause.locus == "op family sum"


def test_the_same_op_failing_another_way_is_another_group(store: Store, family) -> None:
    by_id = groups_by_finding(_groups(store))
    assert by_id[family.finding_ids["std_value"]] is not by_id[family.finding_ids["std"]]
    assert by_id[family.finding_ids["std_value"]].cause.symptom == "value mismatch, eager vs compile:inductor"


def test_findings_without_a_pattern_group_by_op_family(store: Store, family) -> None:
    by_id = groups_by_finding(_groups(store))
    direct = by_id[family.finding_ids["direct_var_mean"]]
    assert [f.id for f in direct.findings] == [family.finding_ids["direct_var_mean"], family.finding_ids["direct_std_mean"]]
    assert direct.cause.source is None and direct.cause.locus == "op family var"
    assert direct is not by_id[family.finding_ids["var"]]  # another mode pair: another fault


def test_passed_findings_are_not_grouped_and_say_so(store: Store, family) -> None:
    by_id = groups_by_finding(_groups(store))
    passed = by_id[family.finding_ids["var_passed"]]
    assert passed.size == 1 and passed is not by_id[family.finding_ids["std_passed"]]
    assert passed.describe().startswith("passed, no failure to group; finding ")
    assert "mismatch" not in passed.describe()


def test_a_filtered_listing_keeps_the_groups_of_what_it_shows(store: Store, family) -> None:
    groups = _groups(store, review_statuses=["unreviewed"], verdicts=["confirmed", "suspicious"])
    keys = {g.cause.key for g in groups}
    assert len(keys) == len(groups) == 4  # the overflow, sum's overflow, std's value mismatch, jit.trace's var family
    assert groups[0].label == f"g{family.finding_ids['var']}" and groups[0].size == 4


def test_built_on_matches_torch_reference_implementations() -> None:
    for op, base in BUILT_ON.items():
        source = inspect.getsource(getattr(torch._refs, op))
        assert f"torch.{base}(" in source or f" {base}(" in source, (op, base)
    assert op_family("torch.std_mean") == op_family("torch.Tensor.var_") == op_family("aten.std.correction") == "var"
    assert op_family("torch.special.logit") == op_family("torch.logit") == "logit"
    assert op_family("torch.nn.LayerNorm") == op_family("torch.nn.functional.layer_norm") == "layernorm"
