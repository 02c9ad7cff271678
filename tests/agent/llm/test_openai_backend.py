"""The openai backend through the real openai/langchain clients against a loopback server."""

from __future__ import annotations

import json

import pytest

from agent.llm.backend import TokenBudget
from agent.llm.errors import LlmBudgetExceeded, LlmOutputError, LlmTimeoutError
from agent.llm.openai_backend import OpenAIBackend
from agent.llm.schemas import TriageResult
from tests.agent.llm.fake_openai_server import Reply, ScriptedServer

VARIABLES = {
    "title": "torch.cumsum wrong in bf16 <tensor> & friends",
    "labels": "module: correctness (silent)",
    "body": "x = torch.ones(4096, dtype=torch.bfloat16)\nprint(torch.cumsum(x, 0)[-1])  # 256 {{not_a_var}}",
    "comments": "",
}
VALID = json.dumps(
    {"is_silent_bug": True, "has_repro": True, "false_alarm_class": None, "confidence": 0.9, "reason": "cumsum in bf16"}
)


def _backend(server: ScriptedServer, **kw) -> OpenAIBackend:
    kw.setdefault("timeout_s", 5.0)
    kw.setdefault("max_retries", 2)
    return OpenAIBackend(model="scripted-model", base_url=server.base_url, api_key="dummy", **kw)


def test_valid_json_is_returned_with_usage_and_raw_issue_text() -> None:
    with ScriptedServer([Reply(VALID)]) as server:
        obj, record = _backend(server).structured("triage", VARIABLES, TriageResult)
    assert obj.is_silent_bug and obj.reason == "cumsum in bf16"
    assert record.prompt_tokens == 11 and record.completion_tokens == 7 and record.attempts == []
    assert record.latency_ms > 0
    body = server.requests[0]["body"]
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "TriageResult"
    user = body["messages"][-1]["content"]
    # issue text goes in verbatim (no HTML escaping) and is never treated as a template
    assert "<tensor> & friends" in user and "{{not_a_var}}" in user
    assert "<issue>" in user


def test_invalid_then_valid_after_repair_round() -> None:
    bad = json.dumps({"is_silent_bug": "perhaps", "has_repro": True})
    with ScriptedServer([Reply(bad), Reply(VALID)]) as server:
        obj, record = _backend(server).structured("triage", VARIABLES, TriageResult)
    assert obj.is_silent_bug is True
    assert len(record.attempts) == 1 and record.attempts[0]["raw"] == bad
    assert "is_silent_bug" in record.attempts[0]["error"]
    assert record.prompt_tokens == 22  # both requests counted
    repair_messages = server.requests[1]["body"]["messages"]
    assert repair_messages[-2] == {"role": "assistant", "content": bad}
    assert "failed validation" in repair_messages[-1]["content"]


def test_rate_limit_then_success_is_retried_by_the_sdk() -> None:
    replies = [Reply(status=429, headers={"retry-after-ms": "20"}), Reply(VALID)]
    with ScriptedServer(replies) as server:
        obj, record = _backend(server).structured("triage", VARIABLES, TriageResult)
    assert obj.confidence == 0.9
    assert len(server.requests) == 2
    assert record.attempts == []


def test_garbage_until_attempts_run_out_keeps_every_attempt() -> None:
    with ScriptedServer([Reply("not json at all"), Reply('{"is_silent_bug": tru')]) as server:
        with pytest.raises(LlmOutputError) as info:
            _backend(server).structured("triage", VARIABLES, TriageResult)
    assert [a["raw"] for a in info.value.attempts] == ["not json at all", '{"is_silent_bug": tru']
    assert all(a["usage"]["completion_tokens"] == 7 for a in info.value.attempts)
    assert len(server.requests) == 2


def test_slow_reply_past_the_timeout() -> None:
    with ScriptedServer([Reply(VALID, delay_s=2.0)]) as server:
        with pytest.raises(LlmTimeoutError):
            _backend(server, timeout_s=0.3, max_retries=0).structured("triage", VARIABLES, TriageResult)


def test_token_budget_stops_further_calls() -> None:
    with ScriptedServer([Reply(VALID), Reply(VALID)]) as server:
        backend = _backend(server, budget=TokenBudget(10))
        backend.structured("triage", VARIABLES, TriageResult)  # 18 tokens: over budget afterwards
        with pytest.raises(LlmBudgetExceeded):
            backend.structured("triage", {**VARIABLES, "title": "other"}, TriageResult)
    assert len(server.requests) == 1


def test_server_without_json_schema_falls_back_to_json_mode() -> None:
    refusal = Reply(status=400, error_message="response_format json_schema is not supported")
    with ScriptedServer([refusal, Reply(VALID), Reply(VALID)]) as server:
        backend = _backend(server)
        obj, record = backend.structured("triage", VARIABLES, TriageResult)
        backend.structured("triage", {**VARIABLES, "title": "second"}, TriageResult)
    assert obj.is_silent_bug
    assert "json_schema refused" in record.attempts[0]["error"]
    assert server.requests[1]["body"]["response_format"] == {"type": "json_object"}
    assert server.requests[2]["body"]["response_format"] == {"type": "json_object"}  # remembered


def test_other_bad_request_is_a_transport_error() -> None:
    from agent.llm.errors import LlmTransportError

    with ScriptedServer([Reply(status=400, error_message="context length exceeded")]) as server:
        with pytest.raises(LlmTransportError):
            _backend(server).structured("triage", VARIABLES, TriageResult)


def test_function_calling_with_repair_of_bad_arguments() -> None:
    replies = [Reply(tool_arguments='{"is_silent_bug": tr'), Reply(tool_arguments=VALID)]
    with ScriptedServer(replies) as server:
        obj, record = _backend(server, method="function_calling").structured("triage", VARIABLES, TriageResult)
    assert obj.is_silent_bug and len(record.attempts) == 1
    first = server.requests[0]["body"]
    assert first["tool_choice"] == {"type": "function", "function": {"name": "TriageResult"}}
    assert first["tools"][0]["function"]["name"] == "TriageResult"


def test_openai_without_endpoint_or_key_is_a_config_error() -> None:
    from agent.config import Settings
    from agent.llm.errors import LlmConfigError
    from agent.llm.factory import make_backend

    with pytest.raises(LlmConfigError, match="OPENAI_BASE_URL"):
        make_backend(Settings(llm="openai"))
