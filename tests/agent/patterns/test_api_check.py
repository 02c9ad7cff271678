"""A BugPattern names one of torch's public callables; every other name is refused with its reason."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agent.patterns import BugPattern, FormalParseError, Mode, parse_formal

ATTACKS = {
    "torch.os.system": "re-exported module os",
    "os.system": "os is not torch",
    "builtins.eval": "builtins is not torch",
    "torch.hub.load": "denied: loads, compiles or parses code",
    "torch.load": "denied: loads, compiles or parses code",
    "torch.utils.cpp_extension.load_inline": "denied: torch.utils tooling",
    "torch.Tensor.__reduce_ex__": "private or dunder segment",
    "torch.ops.load_library": "denied: loads, compiles or parses code",
    # issue 22: names the deny-list let through (a file writer, a global hook, a global switch)
    "torch.PyTorchFileWriter": "denied: reads or writes files",
    "torch.nn.modules.module.register_module_forward_hook": "denied: registers hooks",
    "torch.autograd.set_detect_anomaly": "denied: changes process-wide settings",
}


def _pattern(api: str) -> BugPattern:
    return BugPattern(kind="JIT_Eager_Mismatch", api=api, reference_mode=Mode(name="eager"),
                      test_mode=Mode(name="jit.trace"))


@pytest.mark.parametrize("api", sorted(ATTACKS))
def test_a_pattern_naming_a_rejected_api_does_not_validate(api: str) -> None:
    with pytest.raises(ValidationError) as info:
        _pattern(api)
    assert ATTACKS[api] in str(info.value)


@pytest.mark.parametrize("api", sorted(ATTACKS))
def test_a_pattern_answer_from_an_llm_naming_a_rejected_api_is_refused(api: str) -> None:
    # the LLM's structured answer is validated by this same model (agent/llm backends)
    answer = {"kind": "Precision_Mismatch", "api": api, "reference_mode": {"name": "eager"},
              "test_mode": {"name": "dtype:float16"}}
    with pytest.raises(ValidationError, match="rejected"):
        BugPattern.model_validate(answer)


def test_stored_formal_text_naming_a_rejected_api_does_not_parse() -> None:
    text = ("JIT_Eager_Mismatch ::= APICall(torch.os.system)[mode=eager] → v1 ∧ APICall(torch.os.system)"
            "[mode=jit.trace] → v2 ∧ OracleCheck(ValueCorrectness)(condition=Compare(v1, v2)) → FAIL")
    with pytest.raises(FormalParseError, match="re-exported module os"):
        parse_formal(text)


def test_public_apis_still_make_patterns() -> None:
    for api in ("torch.nn.functional.relu6", "torch.Tensor.add_", "torch.nn.Conv2d", "torch.linalg.svd", "torch.sin",
                "torch.nn.functional.gelu", "torch.Tensor.add", "torch.nn.ReLU6"):
        assert _pattern(api).api == api
