"""Gates on real inventory entries: the source's own parameters never veto, structural ones do.

The patterns are the offline analyzer's for the sample issues (#108 torch.logit in float16 with
eps, #111 nn.GroupNorm under channels_last with num_groups/num_channels, #112 torch.var under
inductor with keepdim/correction); the targets are described by introspecting the installed torch,
exactly as the inventory stores them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.eval.transfer import computed_profiles
from agent.extract import semantics_for
from agent.extract.analyzer import analyze_raw
from agent.extract.transfer_rules import check_transfer
from agent.inventory.enumerate import ApiEntry
from agent.patterns import BugPattern
from agent.transfer.profile import ApiProfile
from agent.transfer.rank import TransferIndex, gate

SAMPLES = Path(__file__).resolve().parents[3] / "examples" / "sample_issues.json"
APIS = {
    "torch.logit": "opinfo", "torch.log": "opinfo", "torch.log1p": "opinfo", "torch.log2": "opinfo",
    "torch.log10": "opinfo", "torch.bitwise_and": "opinfo", "torch.var": "opinfo", "torch.std": "opinfo",
    "torch.nn.functional.layer_norm": "opinfo", "torch.nn.functional.batch_norm": "opinfo",
    "torch.nn.functional.group_norm": "opinfo", "torch.nn.GroupNorm": "module", "torch.nn.BatchNorm2d": "module",
    "torch.nn.InstanceNorm2d": "module", "torch.nn.LayerNorm": "module", "torch.nn.Linear": "module",
}
LOG_FAMILY = ["torch.log", "torch.log1p", "torch.log2", "torch.log10"]
NORMS = ["torch.nn.BatchNorm2d", "torch.nn.InstanceNorm2d", "torch.nn.LayerNorm", "torch.nn.functional.batch_norm",
         "torch.nn.functional.layer_norm", "torch.nn.functional.group_norm"]


@pytest.fixture(scope="module")
def inventory() -> dict[str, ApiProfile]:
    entries = [ApiEntry(api, kind, kind == "opinfo") for api, kind in APIS.items()]
    return {p.api: p for p in computed_profiles(entries)}


@pytest.fixture(scope="module")
def sample_pattern() -> dict[int, BugPattern]:
    issues = {i["number"]: i for i in json.loads(SAMPLES.read_text(encoding="utf-8"))}
    found = {n: analyze_raw(issues[n]).pattern for n in (108, 111, 112)}
    assert all(p is not None for p in found.values())
    return found  # type: ignore[return-value]


def _ranked(inventory: dict[str, ApiProfile], pattern: BugPattern) -> dict[str, object]:
    index = TransferIndex(list(inventory.values()))
    return {c.target_api: c for c in index.rank(pattern, inventory[pattern.api], top_k=None)}


def test_logit_eps_does_not_veto_the_log_family(inventory, sample_pattern) -> None:  # type: ignore[no-untyped-def]
    logit = sample_pattern[108]
    assert logit.api == "torch.logit" and logit.trigger.params == {"eps": "1e-06"}
    ranked = _ranked(inventory, logit)
    assert set(LOG_FAMILY) <= set(ranked)
    log = ranked["torch.log"]
    assert log.adapted_trigger["params"] == {}  # type: ignore[attr-defined]
    assert "trigger drops eps=1e-06" in log.rationale and "torch.logit's own signature" in log.rationale  # type: ignore[attr-defined]


def test_a_target_with_eps_keeps_the_condition(inventory, sample_pattern) -> None:  # type: ignore[no-untyped-def]
    ranked = _ranked(inventory, sample_pattern[108])
    layer_norm = ranked["torch.nn.functional.layer_norm"]
    assert layer_norm.adapted_trigger["params"] == {"eps": "1e-06"}  # type: ignore[attr-defined]
    assert "drops" not in layer_norm.rationale  # type: ignore[attr-defined]


def test_groupnorm_constructor_arguments_do_not_veto_other_norms(inventory, sample_pattern) -> None:  # type: ignore[no-untyped-def]
    group_norm = sample_pattern[111]
    assert set(group_norm.trigger.params) == {"num_groups", "num_channels"}
    ranked = _ranked(inventory, group_norm)
    assert set(NORMS) <= set(ranked)
    batch_norm = ranked["torch.nn.BatchNorm2d"]
    assert batch_norm.adapted_trigger["params"] == {"num_features": "16"}  # type: ignore[attr-defined]
    assert "num_groups=4" in batch_norm.rationale and "constructor" in batch_norm.rationale  # type: ignore[attr-defined]
    assert ranked["torch.nn.functional.group_norm"].adapted_trigger["params"] == {"num_groups": "4"}  # type: ignore[attr-defined]


def test_channels_last_still_needs_a_four_d_input(inventory, sample_pattern) -> None:  # type: ignore[no-untyped-def]
    assert gate(sample_pattern[111], inventory["torch.nn.Linear"], source=inventory["torch.nn.GroupNorm"]) \
        == "takes no 4-D (NCHW) input"


def test_a_reduction_dim_condition_still_gates(inventory, sample_pattern) -> None:  # type: ignore[no-untyped-def]
    var = sample_pattern[112]
    assert var.trigger.params == {"keepdim": "True", "correction": "0"}
    source = inventory["torch.var"]
    assert gate(var, inventory["torch.log"], source=source) == "has no 'keepdim' parameter"
    ranked = _ranked(inventory, var)
    assert ranked["torch.std"].adapted_trigger["params"] == {"keepdim": "True", "correction": "0"}  # type: ignore[attr-defined]


def test_float16_pattern_needs_a_float16_target(inventory, sample_pattern) -> None:  # type: ignore[no-untyped-def]
    assert gate(sample_pattern[108], inventory["torch.bitwise_and"], source=inventory["torch.logit"]) \
        == "does not support float16"


def test_without_a_source_profile_every_condition_gates(inventory, sample_pattern) -> None:  # type: ignore[no-untyped-def]
    # nothing says what eps does, so the old, conservative reading holds
    assert gate(sample_pattern[108], inventory["torch.log"]) == "has no 'eps' parameter"


def test_offline_transfer_check_keeps_logit_to_log(sample_pattern) -> None:  # type: ignore[no-untyped-def]
    result = check_transfer(sample_pattern[108], semantics_for("torch.logit"), semantics_for("torch.log"))
    assert result.keep and "without eps" in result.reason
    assert result.adapted_trigger.params == {}


def test_offline_transfer_check_maps_channels_not_momentum(sample_pattern) -> None:  # type: ignore[no-untyped-def]
    result = check_transfer(sample_pattern[111], semantics_for("torch.nn.GroupNorm"),
                            semantics_for("torch.nn.BatchNorm2d"))
    assert result.keep
    assert result.adapted_trigger.params == {"num_features": "16"}  # num_groups is no momentum


def test_offline_transfer_check_vetoes_a_missing_structural_parameter(sample_pattern) -> None:  # type: ignore[no-untyped-def]
    result = check_transfer(sample_pattern[112], semantics_for("torch.var"), semantics_for("torch.log"))
    assert not result.keep and "keepdim" in result.reason
