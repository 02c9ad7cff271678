"""The harness stage through a real loopback LLM server: described inputs stored, rejections recorded, no code."""

from __future__ import annotations

import json

from agent.harness.stage import REJECTED_NOTE, generate_harnesses
from agent.harness.llm_inputs import make_input_writer
from agent.llm.cache import DbResponseCache
from agent.llm.openai_backend import OpenAIBackend
from db import models
from db.queries import transfer as tq
from db.store import Store
from fuzz_core import HarnessSpec, WorkerPool
from tests.agent.llm.fake_openai_server import Reply, ScriptedServer
from tests.db.fixtures import add_issue_with_pattern

HARDTANH_INPUTS = {
    "args": [{"kind": "tensor", "tensor": {"shape": [4, 8], "dtype": None, "special_values": ["nan"]}}],
    "constructor_kwargs": {"min_val": {"kind": "float", "value": -1.0}, "max_val": {"kind": "float", "value": 1.0}},
    "rationale": "a NaN in the forward input",
}
CODE_ANSWER = {"code": "def make_inputs(seed):\n    __import__('os').system('touch /tmp/pwned')\n"}


def _run_stage(store: Store, replies: list[Reply]):  # type: ignore[no-untyped-def]
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        tq.add_candidates(session, pattern_id, [{"target_api": "torch.nn.Hardtanh", "score": 0.9},
                                                {"target_api": "torch.nn.ReLU6", "score": 0.8}])
    with ScriptedServer(replies) as server:
        # The LLM cache writes from its own sessions while the stage runs (the SQLite lock case).
        backend = OpenAIBackend(model="scripted", base_url=server.base_url, api_key="dummy", timeout_s=5.0,
                                max_retries=0, cache=DbResponseCache(store))
        writer = make_input_writer(backend, semantics=lambda api: json.dumps({"api": api}))
        return generate_harnesses(store, frozenset({"torch.nn.functional.relu6"}), input_writer=writer)


def _harnesses(store: Store) -> dict[str, tuple[dict, str]]:
    with store.session() as session:
        return {h.candidate.target_api: (h.spec, h.candidate.rationale) for h in session.query(models.Harness)}


def test_described_harness_is_stored_and_runs_to_a_verdict(store: Store) -> None:
    summary = _run_stage(store, [Reply(json.dumps(HARDTANH_INPUTS)), Reply(json.dumps(HARDTANH_INPUTS))])
    assert (summary.harnesses, summary.llm_inputs, summary.llm_inputs_rejected) == (2, 2, 0)
    spec, _ = _harnesses(store)["torch.nn.Hardtanh"]
    assert spec["input_source"] == "described" and "code" not in spec
    assert spec["inputs"]["constructor_kwargs"]["max_val"] == {"kind": "float", "value": 1.0}
    with WorkerPool(1, task_timeout_s=60, preload_opinfo=False) as pool:
        result = pool.submit(HarnessSpec.from_dict(spec), budget_s=3).result()
    assert result.verdict == "passed", result.reason
    assert result.executions > 0 and result.evidence["input_source"] == "described"


def test_an_answer_with_code_is_rejected_recorded_and_never_stored(store: Store) -> None:
    summary = _run_stage(store, [Reply(json.dumps(HARDTANH_INPUTS)), Reply(json.dumps(CODE_ANSWER)),
                                 Reply(json.dumps(CODE_ANSWER))])
    assert (summary.harnesses, summary.llm_inputs, summary.llm_inputs_rejected) == (2, 1, 1)
    spec, rationale = _harnesses(store)["torch.nn.ReLU6"]
    assert spec["input_source"] == "signature" and "inputs" not in spec and "code" not in spec
    assert REJECTED_NOTE in rationale and "code: Extra inputs are not permitted" in rationale
    with store.session() as session:
        calls = {c.error is None: c for c in session.query(models.LlmCall).filter_by(prompt_name="harness_inputs")}
    assert set(calls) == {True, False}  # both calls kept; the rejected one with its raw attempts
    assert "__import__" in json.dumps(calls[False].attempts)
