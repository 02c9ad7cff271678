"""The embeddings client against a loopback /v1/embeddings: order, batching, clear failures, no key."""

from __future__ import annotations

import pytest

from agent.llm.embeddings import EmbeddingsClient
from agent.llm.errors import LlmResponseTooLarge, LlmTimeoutError, LlmTransportError
from tests.agent.llm.fake_openai_server import Reply, ScriptedServer, bag_of_words_vector

KEY = "sk-secret-never-shown-123"
TEXTS = ["fmod remainder", "var over dim", "layer norm", "asinh inverse", "logit log odds"]


def _client(base_url: str, **kw) -> EmbeddingsClient:
    kw.setdefault("timeout_s", 5.0)
    kw.setdefault("max_retries", 0)
    return EmbeddingsClient(model="bow-test", base_url=base_url, api_key=KEY, **kw)


def test_vectors_come_back_in_order_in_batches() -> None:
    with ScriptedServer([]) as server:
        client = _client(server.base_url, batch_size=2)
        vectors = client.embed(TEXTS)
    assert vectors == [pytest.approx(bag_of_words_vector(t)) for t in TEXTS]
    assert [r["input"] for r in server.embedding_requests] == [TEXTS[:2], TEXTS[2:4], TEXTS[4:]]
    assert server.embedding_requests[0]["model"] == "bow-test"
    assert client.usage.requests == 3 and client.usage.prompt_tokens == sum(len(t.split()) for t in TEXTS)


def test_http_error_names_the_url_and_never_the_key() -> None:
    with ScriptedServer([], embedding_faults=[Reply(status=500)]) as server:
        with pytest.raises(LlmTransportError) as caught:
            _client(server.base_url).embed(TEXTS)
    assert server.base_url in str(caught.value) and "HTTP 500" in str(caught.value)
    assert KEY not in repr(caught.value) and caught.value.__cause__ is None


def test_a_hanging_endpoint_is_a_timeout() -> None:
    # an error answer dripped one byte every 0.2 s (~80 bytes: over 15 s) against a 0.5 s deadline
    with ScriptedServer([], embedding_faults=[Reply(status=500, drip_interval_s=0.2)]) as server:
        with pytest.raises(LlmTimeoutError, match="deadline"):
            _client(server.base_url, timeout_s=0.5).embed(TEXTS)
        delivery = server.deliveries[0]
        assert delivery.done.wait(120), "the server never finished or noticed the client leave"
    # the client hung up before the answer was out, and asked once (no retry past the deadline)
    assert delivery.closed_early and delivery.sent < delivery.total // 4, delivery
    assert len(server.embedding_requests) == 1


def test_the_run_budget_cuts_a_batch_in_flight() -> None:
    from agent.llm.errors import LlmBudgetExceeded
    from agent.llm.limits import LlmBudget

    budget = LlmBudget()
    with ScriptedServer([], embedding_faults=[Reply(status=500, drip_interval_s=0.2)]) as server:
        client = _client(server.base_url, timeout_s=600.0, budget=budget)
        budget.set_deadline(1.0)
        with pytest.raises(LlmBudgetExceeded, match="time budget ran out during an embeddings request"):
            client.embed(TEXTS)
        delivery = server.deliveries[0]
        assert delivery.done.wait(120), "the server never finished or noticed the client leave"
    assert delivery.closed_early and delivery.sent < delivery.total // 4, delivery


def test_an_oversized_batch_answer_is_refused() -> None:
    with ScriptedServer([]) as server:
        with pytest.raises(LlmResponseTooLarge, match="size cap of 512 bytes"):
            _client(server.base_url, max_response_bytes=512).embed(TEXTS)
        with ScriptedServer([]) as fitting:
            assert len(_client(fitting.base_url, max_response_bytes=1 << 20).embed(TEXTS)) == len(TEXTS)
    assert len(server.embedding_requests) == 1


def test_a_refused_connection_is_a_transport_error() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(LlmTransportError, match=f"127.0.0.1:{port}.*cannot connect"):
        _client(f"http://127.0.0.1:{port}/v1").embed(TEXTS)
