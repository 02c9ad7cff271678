"""mutate="values": inputs keep their seed's structure (Note [Value-only mutation] in fuzz_core/campaign.py)."""

from __future__ import annotations

from typing import Any

import pytest

from fuzz_core import HarnessSpec, run_harness
from fuzz_core.campaign import VALUE_MUTATORS, Campaign
from fuzz_core.spec import SpecError

_TENSOR = {"kind": "tensor", "tensor": {"shape": [8, 8]}}


def _spec(mutate: str, **extra: Any) -> HarnessSpec:
    return HarnessSpec(api="torch.add", input_source="described", inputs={"args": [_TENSOR, _TENSOR]},
                       test_mode="compile:eager", seed=3, mutate=mutate, **extra)


def test_an_unknown_mutation_scope_is_refused_with_the_known_ones() -> None:
    with pytest.raises(SpecError, match="mutate 'shapes' not in \\('all', 'values'\\)"):
        _spec("shapes")


def test_value_only_specs_have_their_own_id_and_the_default_keeps_the_id_it_had() -> None:
    default = _spec("all")
    assert _spec("values").spec_id != default.spec_id
    before_the_field = default.to_dict()
    del before_the_field["mutate"]
    assert HarnessSpec.from_dict(before_the_field).spec_id == default.spec_id
    assert HarnessSpec.from_dict(_spec("values").to_dict()).mutate == "values"


def test_value_only_mutation_uses_the_value_mutators_alone() -> None:
    campaign = Campaign(_spec("values"))
    assert campaign.mutators and {m.name for m in campaign.mutators} <= set(VALUE_MUTATORS)
    assert {m.name for m in Campaign(_spec("all")).mutators} - set(VALUE_MUTATORS)


def test_value_only_inputs_compile_once_where_all_mutators_compile_new_structures(tmp_path) -> None:  # type: ignore[no-untyped-def]
    recorded: list[dict[str, Any]] = []
    values = run_harness(_spec("values"), max_executions=300, workdir=tmp_path / "values",
                         progress=recorded.append)
    assert values.verdict == "passed", values.reason
    assert values.executions == 300
    assert values.evidence["compiles"] == 1
    steps = {step[0] for record in recorded for step in record["steps"]}
    assert steps and steps <= set(VALUE_MUTATORS)
    # More inputs here: new structures are admitted only while compiling took under COMPILE_SHARE of the run.
    everything = run_harness(_spec("all"), max_executions=2000, workdir=tmp_path / "all")
    assert everything.evidence["compiles"] > 1


def test_a_value_only_spec_with_only_structural_mutators_is_a_broken_harness(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from fuzz_core.mutators import DEFAULT_MUTATORS

    structural = [m for m in DEFAULT_MUTATORS if m.name not in VALUE_MUTATORS]
    result = run_harness(_spec("values"), max_executions=20, workdir=tmp_path, mutators=structural)
    assert result.verdict == "error"
    assert "leaves none of the given mutators" in result.reason
