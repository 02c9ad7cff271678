"""HarnessSpec / HarnessResult serialisation, spec ids, validation, and pattern-kind resolution."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz_core import KIND_MODE_PAIRS, HarnessResult, HarnessSpec, resolve_kind
from fuzz_core.kinds import UnknownKind
from fuzz_core.modes import MODE_NAMES
from fuzz_core.spec import SpecError


@given(
    api=st.sampled_from(["torch.add", "torch.nn.functional.relu6", "torch.Tensor.add"]),
    test_mode=st.sampled_from(MODE_NAMES),
    seed=st.integers(0, 2**31),
    specials=st.lists(st.sampled_from(["nan", "inf", "-0.0", "denormal"]), max_size=3),
    params=st.dictionaries(st.sampled_from(["alpha", "dim", "padding"]), st.one_of(st.integers(), st.just("> 0"))),
)
def test_spec_round_trips_through_json(api, test_mode, seed, specials, params) -> None:
    spec = HarnessSpec(api=api, test_mode=test_mode, seed=seed,
                       trigger={"special_values": specials, "params": params})
    again = HarnessSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert again == spec
    assert again.spec_id == spec.spec_id


def test_spec_id_ignores_budgets_but_not_content() -> None:
    base = HarnessSpec(api="torch.add", test_mode="jit.trace")
    assert HarnessSpec(api="torch.add", test_mode="jit.trace", max_executions=5, budget_s=3).spec_id == base.spec_id
    assert HarnessSpec(api="torch.add", test_mode="jit.trace", seed=1).spec_id != base.spec_id
    assert HarnessSpec(api="torch.sub", test_mode="jit.trace").spec_id != base.spec_id


@pytest.mark.parametrize("bad", [
    {"api": ""},
    {"api": "torch.add", "input_source": "files"},
    {"api": "torch.add", "input_source": "code"},
    {"api": "torch.add", "oracle": "vibes"},
    {"api": "torch.add", "trigger": {"special_values": ["nan", "purple"]}},
    {"api": "torch.add", "trigger": {"layout": "diagonal"}},
])
def test_invalid_specs_are_rejected(bad: dict) -> None:
    with pytest.raises(SpecError):
        HarnessSpec(**bad)


def test_unknown_spec_fields_are_rejected() -> None:
    with pytest.raises(SpecError, match="unknown spec fields"):
        HarnessSpec.from_dict({"api": "torch.add", "colour": "red"})


def test_result_round_trip_and_verdict_check() -> None:
    result = HarnessResult("confirmed", "x", 3, 0.5, {"max_abs_diff": 1.0}, "print()", "sig")
    assert HarnessResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    with pytest.raises(ValueError):
        HarnessResult("probably")


def test_kind_mode_pairs_contract() -> None:
    assert KIND_MODE_PAIRS["JIT_Eager_Mismatch"] == ("eager", "jit.trace")
    assert KIND_MODE_PAIRS["Compile_Eager_Mismatch"] == ("eager", "compile:inductor")
    assert KIND_MODE_PAIRS["Precision_Mismatch"] == ("eager", "dtype:float16")
    for reference, test in KIND_MODE_PAIRS.values():
        assert reference in MODE_NAMES and test in MODE_NAMES


def test_resolve_kind_is_lenient_and_suggests() -> None:
    assert resolve_kind("compile_eager_mismatch") == "Compile_Eager_Mismatch"
    assert resolve_kind("NaN-Inf") == "NaN_Inf"
    with pytest.raises(UnknownKind) as info:
        resolve_kind("Compile_Eagr_Mismatch")
    assert info.value.suggestions[0] == "Compile_Eager_Mismatch"
