"""Issue 22 item 3 (trigger params) at the pattern's entry points: a Trigger built by the offline
analyzer, an LLM's PatternAnswer and TransferCheck, and a stored trigger read back."""

from __future__ import annotations

import json

from agent.llm.schemas import PatternAnswer, TransferCheck
from agent.patterns import BugPattern, Mode, Trigger, parse_formal

HOSTILE = {"dim": "0", "file_name": "../../inductor_cache/kernel.py", "output_size": "10**12",
           "size": "(100000, 100000)", "mode": "'nearest'"}


def _pattern(api: str, params: dict) -> BugPattern:
    return BugPattern(kind="NaN_Inf", api=api, reference_mode=Mode(name="eager"), test_mode=Mode(name="jit.trace"),
                      trigger=Trigger(params=params))


def test_a_trigger_keeps_bounded_params_and_records_why_it_dropped_the_rest() -> None:
    trigger = Trigger(params=HOSTILE)
    assert trigger.params == {"dim": "0", "mode": "'nearest'"}
    assert set(trigger.dropped_params) == {"file_name", "output_size", "size"}
    assert "path-like" in trigger.dropped_params["file_name"]
    assert "size-like" in trigger.dropped_params["size"]
    # stored with the pattern, and read back unchanged
    stored = json.loads(json.dumps(trigger.model_dump(mode="json")))
    assert stored["dropped_params"] == trigger.dropped_params
    assert Trigger.model_validate(stored) == trigger


def test_a_trigger_that_dropped_nothing_dumps_as_before() -> None:
    assert Trigger(params={"dim": "0"}).model_dump() == {"dtypes": [], "special_values": [], "layout": None,
                                                         "shape": [], "params": {"dim": "0"}}


def test_answer_numbers_become_pattern_text_and_are_bounded_too() -> None:
    trigger = Trigger.model_validate({"params": {"dim": 1, "keepdim": True, "kernel_size": [3, 3], "n": 10**9,
                                                 "weights": {"a": 1}}})
    assert trigger.params == {"dim": "1", "keepdim": "True", "kernel_size": "[3, 3]"}
    assert set(trigger.dropped_params) == {"n", "weights"}


def test_a_pattern_types_its_params_from_the_apis_signature() -> None:
    pattern = _pattern("torch.nn.functional.interpolate",
                       {"align_corners": "'yes'", "antialias": "True", "mode": "'bicubic'", "scale_factor": "2.0"})
    assert pattern.trigger.params == {"antialias": "True", "mode": "'bicubic'", "scale_factor": "2.0"}
    assert "bool" in pattern.trigger.dropped_params["align_corners"]
    conv = _pattern("torch.nn.Conv2d", {"padding_mode": "'bogus'", "padding": "'same'"})
    assert conv.trigger.params == {"padding": "'same'"} and "reflect" in conv.trigger.dropped_params["padding_mode"]


def test_the_formal_notation_carries_the_kept_params_only() -> None:
    pattern = _pattern("torch.cumsum", HOSTILE)
    again = parse_formal(pattern.to_formal())
    assert again.formal_part() == pattern.formal_part()
    assert again.trigger.params == {"dim": "0", "mode": "'nearest'"}


def test_an_llm_pattern_answer_with_hostile_params_keeps_the_pattern() -> None:
    answer = {"pattern": {
        "kind": "JIT_Eager_Mismatch", "api": "torch.nn.functional.relu6",
        "reference_mode": {"name": "eager", "options": {}}, "test_mode": {"name": "jit.trace", "options": {}},
        "trigger": {"dtypes": [], "special_values": ["nan"], "layout": None, "shape": [],
                    "params": {"inplace": "False", "file_name": "/etc/shadow", "size": 10**12, "x": "a" * 500}},
        "oracle": {"kind": "NaNConsistency"}, "repro": "", "source_issue": None, "confidence": 0.8},
        "no_pattern_reason": None}
    parsed = PatternAnswer.model_validate_json(json.dumps(answer))
    assert parsed.pattern is not None and parsed.pattern.trigger.params == {"inplace": "False"}
    assert set(parsed.pattern.trigger.dropped_params) == {"file_name", "size", "x"}
    # what the model is shown: no field for the reasons, params still name -> text
    trigger_schema = PatternAnswer.model_json_schema()["$defs"]["Trigger"]["properties"]
    assert "dropped_params" not in trigger_schema and "params" in trigger_schema


def test_an_llm_transfer_check_adapting_the_trigger_is_bounded_too() -> None:
    check = TransferCheck.model_validate({"keep": True, "adapted_trigger": {"params": {"dim": "0", "path": "../../x"}}})
    assert check.adapted_trigger is not None and check.adapted_trigger.params == {"dim": "0"}
    assert "path-like" in check.adapted_trigger.dropped_params["path"]
