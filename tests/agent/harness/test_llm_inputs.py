"""LLM-written input code: validated, stored only when usable, and run only in a sandboxed worker."""

from __future__ import annotations

import json

import pytest

from agent.harness.generate import build_spec
from agent.harness.llm_code import HarnessCodeError, make_code_writer, validate_harness_code
from agent.llm.openai_backend import OpenAIBackend
from agent.llm.prompts import load_prompt
from agent.llm.schemas import HarnessCode
from tests.agent.llm.fake_openai_server import Reply, ScriptedServer
from tests.db.fixtures import RELU6_PATTERN

GOOD = (
    "def make_inputs(seed):\n"
    "    g = torch.Generator().manual_seed(seed)\n"
    "    x = torch.randn(3, 5, generator=g)\n"
    "    x[0, 0] = float('nan')\n"
    "    return (x,), {}\n"
)
MODULE = "CONSTRUCTOR_KWARGS = {'min_val': -1.0, 'max_val': 1.0}\n\n" + GOOD.replace("(3, 5", "(2, 4")


def _writer(server: ScriptedServer):  # type: ignore[no-untyped-def]
    backend = OpenAIBackend(model="scripted", base_url=server.base_url, api_key="dummy", timeout_s=5.0, max_retries=0)
    return make_code_writer(backend, semantics=lambda api: json.dumps({"api": api}))


@pytest.mark.parametrize(("code", "why"), [
    ("import os\ndef make_inputs(seed):\n    return (), {}\n", "imports os"),
    ("def make_inputs(seed):\n    open('/etc/passwd')\n    return (), {}\n", "uses open"),
    ("def make_inputs(seed):\n    return ().__class__.__bases__, {}\n", "reaches for __"),
    ("def inputs(seed):\n    return (), {}\n", "defines no make_inputs"),
    ("def make_inputs(seed)\n    return", "does not parse"),
])
def test_unsafe_or_broken_code_is_refused(code: str, why: str) -> None:
    with pytest.raises(HarnessCodeError, match=why):
        validate_harness_code(code)


def test_prompt_example_is_valid_code() -> None:
    example = json.loads(load_prompt("harness_code").system.split("trigger {\"special_values\": [\"nan\"]}:\n", 1)[1]
                         .split("\n\n## user", 1)[0])
    validate_harness_code(HarnessCode.model_validate(example).code)


def test_writer_returns_validated_code_from_the_model() -> None:
    with ScriptedServer([Reply(json.dumps({"code": GOOD, "rationale": "nan"}))]) as server:
        code = _writer(server)(RELU6_PATTERN, "torch.special.entr", {"special_values": ["nan"]})
    assert code is not None and "def make_inputs" in code and code.startswith("import math\nimport torch")
    user = server.requests[0]["body"]["messages"][-1]["content"]
    assert "torch.special.entr" in user and '"special_values": ["nan"]' in user


def test_writer_drops_code_that_fails_the_check() -> None:
    bad = {"code": "import subprocess\ndef make_inputs(seed):\n    return (), {}\n", "rationale": ""}
    with ScriptedServer([Reply(json.dumps(bad))]) as server:
        assert _writer(server)(RELU6_PATTERN, "torch.special.entr", {}) is None


def test_generated_code_runs_in_a_sandboxed_worker() -> None:
    from fuzz_core import HarnessSpec, WorkerPool

    spec = build_spec(RELU6_PATTERN, "torch.nn.Hardtanh", {}, in_opinfo=False, seed_key=1)
    spec.update(input_source="code", code=validate_harness_code(MODULE), reference_mode="eager", test_mode="eager")
    with WorkerPool(1, task_timeout_s=60, preload_opinfo=False) as pool:
        result = pool.submit(HarnessSpec.from_dict(spec), budget_s=3).result()
    assert result.verdict == "passed", result.reason
    assert result.executions > 0
