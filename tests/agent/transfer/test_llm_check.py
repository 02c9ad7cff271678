"""The transfer check through the real openai/langchain clients against a loopback server."""

from __future__ import annotations

import json

from agent.llm.openai_backend import OpenAIBackend
from agent.transfer.llm_check import make_check
from agent.transfer.rank import RankedCandidate
from tests.agent.llm.fake_openai_server import Reply, ScriptedServer
from tests.db.fixtures import RELU6_PATTERN


def _candidate(api: str = "torch.nn.functional.hardtanh") -> RankedCandidate:
    return RankedCandidate(api, 0.7, "ranked", {"special_values": ["nan"], "params": {}})


def _backend(server: ScriptedServer) -> OpenAIBackend:
    return OpenAIBackend(model="scripted", base_url=server.base_url, api_key="dummy", timeout_s=5.0, max_retries=0)


def test_veto_and_adapted_trigger_come_from_the_model() -> None:
    answer = {"keep": False, "reason": "hardtanh has no fused NaN path",
              "adapted_trigger": {"dtypes": [], "special_values": ["nan"], "layout": None, "shape": [], "params": {}}}
    with ScriptedServer([Reply(json.dumps(answer))]) as server:
        keep, reason, trigger = make_check(_backend(server))(RELU6_PATTERN, _candidate())
    assert keep is False and reason == "hardtanh has no fused NaN path"
    assert trigger["special_values"] == ["nan"]
    user = server.requests[0]["body"]["messages"][-1]["content"]
    assert "torch.nn.functional.hardtanh" in user and "JIT_Eager_Mismatch ::=" in user


def test_failed_check_keeps_the_candidate() -> None:
    with ScriptedServer([Reply("not json"), Reply("still not json")] * 3) as server:
        keep, reason, trigger = make_check(_backend(server))(RELU6_PATTERN, _candidate())
    assert keep is True and "kept as ranked" in reason and trigger is None
