"""Pattern + target → fuzz_core spec: modes, oracle, trigger filtered to what the core knows."""

from __future__ import annotations

import pytest

from agent.harness.generate import build_spec, reference_mode_for, with_precision
from agent.patterns import BugPattern, Mode, Oracle, Trigger
from fuzz_core.spec import HarnessSpec


def _pattern(test_mode: str = "jit.trace", oracle: Oracle | None = None, trigger: Trigger | None = None) -> BugPattern:
    return BugPattern(kind="JIT_Eager_Mismatch", api="torch.nn.functional.relu6", reference_mode=Mode(name="eager"),
                      test_mode=Mode(name=test_mode), trigger=trigger or Trigger(), oracle=oracle or Oracle())


def test_spec_round_trips_through_fuzz_core() -> None:
    trigger = Trigger(special_values=["nan"], shape=["broadcast", "empty"], layout="noncontiguous")
    spec = build_spec(_pattern(trigger=trigger), "torch.nn.functional.hardtanh", trigger.model_dump(),
                      in_opinfo=True, seed_key=7)
    rebuilt = HarnessSpec.from_dict(spec)
    assert rebuilt.api == "torch.nn.functional.hardtanh"
    assert (rebuilt.reference_mode, rebuilt.test_mode, rebuilt.oracle) == ("eager", "jit.trace", "value")
    assert rebuilt.trigger == {"special_values": ["nan"], "layout": "noncontiguous", "shape": ["empty"]}
    assert rebuilt.input_source == "opinfo" and rebuilt.kind == "JIT_Eager_Mismatch"


def test_seed_is_stable_per_pattern_and_target() -> None:
    a = build_spec(_pattern(), "torch.relu", {}, in_opinfo=False, seed_key=1)
    b = build_spec(_pattern(), "torch.relu", {}, in_opinfo=False, seed_key=1)
    c = build_spec(_pattern(), "torch.relu", {}, in_opinfo=False, seed_key=2)
    assert a["seed"] == b["seed"] != c["seed"]
    assert a["input_source"] == "signature"


def test_precision_pattern_keeps_float32_inputs() -> None:
    spec = build_spec(_pattern("dtype:float16"), "torch.relu", {"dtypes": ["float16"]}, in_opinfo=True, seed_key=1)
    assert spec["dtype"] == "float32"
    assert with_precision(spec, "mixed") == [spec]


def test_precision_flag_expands_value_harnesses() -> None:
    spec = build_spec(_pattern(), "torch.relu", {}, in_opinfo=True, seed_key=1)
    assert [s["dtype"] for s in with_precision(spec, "mixed")] == ["float32", "bfloat16"]
    assert [s["dtype"] for s in with_precision(spec, "half")] == ["float16"]
    with pytest.raises(ValueError):
        with_precision(spec, "quarter")


def test_nan_oracle_maps_to_fuzz_core_name() -> None:
    spec = build_spec(_pattern(oracle=Oracle(kind="NaNConsistency")), "torch.relu", {}, in_opinfo=True, seed_key=1)
    assert spec["oracle"] == "nan_inf"


def test_literal_params_become_values_conditions_stay_text() -> None:
    trigger = Trigger(params={"dim": "0", "keepdim": "True", "eps": "1e-06", "padding": "> 0", "mode": "bilinear",
                             "kernel_size": "(3, 3)"})
    spec = build_spec(_pattern(trigger=trigger), "torch.var", trigger.model_dump(), in_opinfo=True, seed_key=1)
    assert spec["trigger"]["params"] == {"dim": 0, "keepdim": True, "eps": 1e-06, "padding": "> 0",
                                         "mode": "bilinear", "kernel_size": [3, 3]}
    HarnessSpec.from_dict(spec)


def test_gradient_pattern_becomes_a_gradient_harness() -> None:
    from agent.harness.stage import unsupported_mode

    pattern = BugPattern(kind="Gradient_Mismatch", api="torch.prod", reference_mode=Mode(name="eager"),
                         test_mode=Mode(name="grad"), trigger=Trigger(), oracle=Oracle())
    assert unsupported_mode(pattern) is None
    spec = HarnessSpec.from_dict(build_spec(pattern, "torch.cumprod", {}, in_opinfo=True, seed_key=1))
    assert (spec.reference_mode, spec.test_mode) == ("grad:numeric", "grad")
    assert reference_mode_for("eager", "grad:compile:inductor") == "grad"
    assert reference_mode_for("eager", "jit.trace") == "eager"
