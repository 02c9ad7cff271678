"""The openai backend through the real openai/langchain clients against a loopback server."""

from __future__ import annotations

import json

import pytest

from agent.llm.errors import LlmBudgetExceeded, LlmEndpointDown, LlmOutputError, LlmTimeoutError, LlmTransportError
from agent.llm.limits import LlmBudget
from agent.llm.openai_backend import OpenAIBackend
from agent.llm.schemas import TriageResult
from tests.agent.llm.fake_openai_server import (
    MALFORMED,
    Reply,
    ScriptedServer,
    fenced,
    prose_then_fenced,
    refused_url,
)

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
    assert record.prompt_tokens == 11 and record.completion_tokens == 7
    [attempt] = record.attempts  # the one request, kept with its usage and latency
    assert attempt["error"] is None and attempt["usage"]["completion_tokens"] == 7 and attempt["latency_ms"] > 0
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
    assert len(record.attempts) == 2 and record.attempts[0]["raw"] == bad and record.attempts[1]["error"] is None
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
    assert len(record.attempts) == 1  # the SDK's retry is inside one attempt


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
        backend = _backend(server, budget=LlmBudget(calls=1))
        backend.structured("triage", VARIABLES, TriageResult)
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
    assert obj.is_silent_bug and len(record.attempts) == 2 and record.attempts[0]["error"]
    first = server.requests[0]["body"]
    assert first["tool_choice"] == {"type": "function", "function": {"name": "TriageResult"}}
    assert first["tools"][0]["function"]["name"] == "TriageResult"


def test_openai_without_endpoint_or_key_is_a_config_error() -> None:
    from agent.config import Settings
    from agent.llm.errors import LlmConfigError
    from agent.llm.factory import make_backend

    with pytest.raises(LlmConfigError, match="OPENAI_BASE_URL"):
        make_backend(Settings(llm="openai"))


@pytest.mark.parametrize("wrap", [fenced, prose_then_fenced, lambda text: f"The answer: {text} (done)"],
                         ids=["fenced", "prose+fence", "prose-around"])
def test_json_is_taken_from_fences_and_prose_on_the_first_attempt(wrap) -> None:  # type: ignore[no-untyped-def]
    with ScriptedServer([Reply(wrap(VALID))]) as server:
        obj, record = _backend(server).structured("triage", VARIABLES, TriageResult)
    assert obj.reason == "cumsum in bf16" and len(server.requests) == 1


def test_semantic_check_failure_goes_through_the_repair_round() -> None:
    other = VALID.replace("cumsum in bf16", "about something else")
    check = lambda t: None if "cumsum" in t.reason else "the reason must name the API"  # noqa: E731
    with ScriptedServer([Reply(other), Reply(VALID)]) as server:
        obj, record = _backend(server).structured("triage", VARIABLES, TriageResult, check=check)
    assert obj.reason == "cumsum in bf16"
    assert "must name the API" in server.requests[1]["body"]["messages"][-1]["content"]
    assert "must name the API" in record.attempts[0]["error"]


class _ListCache:
    def __init__(self) -> None:
        self.rows: dict[str, object] = {}

    def get(self, key: str):  # type: ignore[no-untyped-def]
        row = self.rows.get(key)
        return None if row is None or row.error else row.response  # type: ignore[attr-defined]

    def put(self, record) -> None:  # type: ignore[no-untyped-def]
        self.rows[record.cache_key] = record


def test_answer_failing_the_check_is_stored_as_an_error_never_replayed() -> None:
    other = VALID.replace("cumsum in bf16", "unrelated")
    check = lambda t: None if "cumsum" in t.reason else "the reason must name the API"  # noqa: E731
    cache = _ListCache()
    with ScriptedServer([Reply(other), Reply(other), Reply(VALID)]) as server:
        backend = _backend(server, cache=cache)
        with pytest.raises(LlmOutputError, match="must name the API"):
            backend.structured("triage", VARIABLES, TriageResult, check=check)
        [stored] = cache.rows.values()
        assert stored.error and stored.response is None and len(stored.attempts) == 2  # type: ignore[attr-defined]
        obj, record = backend.structured("triage", VARIABLES, TriageResult, check=check)  # asked again
    assert not record.cached and obj.reason == "cumsum in bf16" and len(server.requests) == 3


def test_retry_after_is_capped(caplog: pytest.LogCaptureFixture) -> None:
    import logging
    import re

    caplog.set_level(logging.INFO, logger="openai._base_client")
    replies = [Reply(status=429, headers={"retry-after": "120"}), Reply(VALID)]
    with ScriptedServer(replies) as server:
        obj, _ = _backend(server, retry_after_cap_s=0.2, timeout_s=600).structured("triage", VARIABLES, TriageResult)
    assert obj.is_silent_bug and len(server.requests) == 2
    # the wait the SDK scheduled before its retry: the cap, not the server's 120 s
    waits = [float(m.group(1)) for r in caplog.records
             if (m := re.match(r"Retrying request in ([0-9.]+) seconds", r.getMessage()))]
    assert waits == [pytest.approx(0.2)]


def test_connection_refused_names_the_url_and_opens_the_breaker() -> None:
    url = refused_url()
    backend = OpenAIBackend(model="m", base_url=url, api_key="dummy", timeout_s=2, max_retries=0, breaker_threshold=2)
    for n in range(2):
        with pytest.raises(LlmTransportError, match=url.replace(".", r"\.")):
            backend.structured("triage", {**VARIABLES, "title": str(n)}, TriageResult)
    with pytest.raises(LlmEndpointDown, match=f"{url}.*2 times in a row"):
        backend.structured("triage", {**VARIABLES, "title": "third"}, TriageResult)


def test_a_success_closes_the_breaker_count() -> None:
    replies = [Reply(status=500), Reply(VALID), Reply(status=500)]
    with ScriptedServer(replies) as server:
        backend = _backend(server, max_retries=0, breaker_threshold=2)
        for n in range(3):
            try:
                backend.structured("triage", {**VARIABLES, "title": str(n)}, TriageResult)
            except LlmTransportError as exc:
                assert "answered 500" in str(exc) and server.base_url in str(exc)
    assert not backend.breaker.open


def test_token_budget_is_checked_with_the_expected_size_before_the_call() -> None:
    with ScriptedServer([Reply(VALID, prompt_tokens=700, completion_tokens=50)] * 3) as server:
        # room for one prompt (~750 tokens estimated) plus an expected completion, not for a second call
        backend = _backend(server, budget=LlmBudget(tokens=1400))
        backend.structured("triage", VARIABLES, TriageResult)
        with pytest.raises(LlmBudgetExceeded, match="would be exceeded"):
            backend.structured("triage", {**VARIABLES, "title": "other"}, TriageResult)
    assert len(server.requests) == 1 and backend.budget.used_tokens <= 1200


def test_malformed_twice_is_an_output_error_with_both_attempts() -> None:
    with ScriptedServer([Reply(MALFORMED), Reply(MALFORMED)]) as server:
        with pytest.raises(LlmOutputError) as info:
            _backend(server).structured("triage", VARIABLES, TriageResult)
    assert len(info.value.attempts) == 2 and len(server.requests) == 2


def test_hang_is_a_timeout_naming_the_url() -> None:
    with ScriptedServer([Reply(VALID, delay_s=3.0)]) as server:
        with pytest.raises(LlmTimeoutError, match=server.base_url.replace(".", r"\.")):
            _backend(server, timeout_s=0.3, max_retries=0).structured("triage", VARIABLES, TriageResult)
