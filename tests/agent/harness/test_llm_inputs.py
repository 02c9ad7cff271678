"""LLM-described inputs: typed data only; any answer carrying code or unknown strings is rejected with a reason."""

from __future__ import annotations

import json

import pytest

from agent.harness.llm_inputs import DescribedInputs, make_input_writer
from agent.llm.openai_backend import OpenAIBackend
from agent.llm.prompts import load_prompt
from agent.llm.schemas import HarnessInputs
from fuzz_core.inputs.description import InputDescription
from tests.agent.llm.fake_openai_server import Reply, ScriptedServer
from tests.db.fixtures import RELU6_PATTERN

GOOD = {"args": [{"kind": "tensor", "tensor": {"shape": [3, 5], "special_values": ["nan"]}}],
        "kwargs": {"inplace": {"kind": "bool", "value": False}}, "rationale": "a NaN input"}
CODE_FIELD = {"code": "import os\ndef make_inputs(seed):\n    os.system('touch /tmp/x')\n", "args": []}
SMUGGLED_DTYPE = {"args": [{"kind": "tensor", "tensor": {"shape": [3], "dtype": "os.system('x')"}}]}
SMUGGLED_STRING = {"args": [{"kind": "tensor", "tensor": {"shape": [3]}}],
                   "kwargs": {"mode": {"kind": "str", "value": "__import__('os')"}}}
SMUGGLED_NAME = {"kwargs": {"__class__": {"kind": "int", "value": 1}}}
HUGE = {"args": [{"kind": "tensor", "tensor": {"shape": [4096, 4096]}}]}


def _write(replies: list[Reply], api: str = "torch.nn.functional.hardtanh") -> tuple[DescribedInputs, ScriptedServer]:
    with ScriptedServer(replies) as server:
        backend = OpenAIBackend(model="scripted", base_url=server.base_url, api_key="dummy", timeout_s=5.0,
                                max_retries=0)
        writer = make_input_writer(backend, semantics=lambda name: json.dumps({"api": name}))
        return writer(RELU6_PATTERN, api, {"special_values": ["nan"]}), server


def test_writer_returns_the_validated_description() -> None:
    answer, server = _write([Reply(json.dumps(GOOD))])
    assert answer.rejected is None and answer.inputs is not None
    assert InputDescription.from_dict(answer.inputs).args[0].tensor.special_values == ("nan",)  # type: ignore[union-attr]
    user = server.requests[0]["body"]["messages"][-1]["content"]
    assert "torch.nn.functional.hardtanh" in user and '"special_values": ["nan"]' in user


def test_a_repaired_answer_is_accepted() -> None:
    answer, server = _write([Reply(json.dumps(SMUGGLED_STRING)), Reply(json.dumps(GOOD))])
    assert answer.inputs is not None and len(server.requests) == 2
    assert "not an allowed string" in server.requests[1]["body"]["messages"][-1]["content"]


@pytest.mark.parametrize(("bad", "reason"), [
    (CODE_FIELD, "code: Extra inputs are not permitted"),
    (SMUGGLED_DTYPE, "args.0.tensor.dtype"),
    (SMUGGLED_STRING, 'kwargs.mode.value: "__import__(\'os\')" is not an allowed string'),
    (SMUGGLED_NAME, "'__class__' is not a plain parameter name"),
    (HUGE, "at most 65536"),
])
def test_answers_that_are_not_a_valid_description_are_rejected_with_a_reason(bad: dict, reason: str) -> None:
    answer, server = _write([Reply(json.dumps(bad)), Reply(json.dumps(bad))])
    assert answer.inputs is None and answer.rejected is not None and answer.unavailable is None
    assert reason in answer.rejected
    assert len(server.requests) == 2  # one repair round, then the answer is turned away


def test_no_answer_is_unavailable_not_rejected() -> None:
    answer, _server = _write([Reply(status=400, error_message="model not found")])
    assert answer.inputs is None and answer.rejected is None
    assert answer.unavailable is not None and "model not found" in answer.unavailable


def test_prompt_example_is_a_valid_description() -> None:
    system = load_prompt("harness_inputs").system
    example = json.loads(system.split('trigger {"special_values": ["nan"]}:\n', 1)[1])
    assert HarnessInputs.model_validate(example).to_description().constructor_kwargs
