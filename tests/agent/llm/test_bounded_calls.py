"""Issue 22 item 5: an LLM call is bounded whatever the endpoint does (real loopback server, real SDK).

Each check is about work done, never about the clock: a short deadline against an answer that
would take a minute to arrive, and the server's own count of the bytes it got out before the
client hung up; a size cap against an answer four times larger; a byte charge against an
endpoint that says "0 tokens".
"""

from __future__ import annotations

import json

import pytest

from agent.llm.errors import LlmBudgetExceeded, LlmResponseTooLarge, LlmTimeoutError, LlmTransportError
from agent.llm.limits import ENVELOPE_BYTES, MAX_BYTES_PER_TOKEN, LlmBudget
from agent.llm.openai_backend import OpenAIBackend
from agent.llm.schemas import TriageResult
from tests.agent.llm.fake_openai_server import Delivery, Reply, ScriptedServer

VARIABLES = {"title": "torch.cumsum wrong in bf16", "labels": "module: correctness (silent)",
             "body": "x = torch.ones(4096, dtype=torch.bfloat16)\nprint(torch.cumsum(x, 0)[-1])", "comments": ""}
VALID = json.dumps({"is_silent_bug": True, "has_repro": True, "false_alarm_class": None, "confidence": 0.9,
                    "reason": "cumsum in bf16"})
DRIP_S = 0.2  # one byte this often: the ~400-byte answer would take well over a minute
CAP = 1 << 20  # the backends below refuse answers over 1 MiB
HUGE = 16 << 20  # an answer of 16 MiB: past the cap, and past what loopback socket buffers absorb


class ListCache:
    """The backend's cache protocol in a dict: what a failed or refused call leaves behind."""

    def __init__(self) -> None:
        self.rows: dict[str, object] = {}

    def get(self, key: str) -> dict | None:
        row = self.rows.get(key)
        return None if row is None or row.error else row.response  # type: ignore[attr-defined]

    def put(self, record) -> None:  # type: ignore[no-untyped-def]
        self.rows[record.cache_key] = record


def _backend(server: ScriptedServer, **kw) -> OpenAIBackend:  # type: ignore[no-untyped-def]
    kw.setdefault("timeout_s", 1.0)
    kw.setdefault("max_retries", 2)
    kw.setdefault("max_response_bytes", CAP)
    return OpenAIBackend(model="scripted-model", base_url=server.base_url, api_key="dummy", **kw)


def _finished(delivery: Delivery) -> Delivery:
    """The delivery once the server stopped sending (it notices a closed connection at its next write)."""
    assert delivery.done.wait(120), "the server never finished or noticed the client leave"
    return delivery


def _huge_answer() -> str:
    return json.dumps({**json.loads(VALID), "reason": "x" * HUGE})


def test_a_dripping_endpoint_is_cut_at_the_total_deadline() -> None:
    cache = ListCache()
    with ScriptedServer([Reply(VALID, drip_interval_s=DRIP_S)]) as server:
        backend = _backend(server, cache=cache)
        with pytest.raises(LlmTimeoutError, match="deadline of 1 s"):
            backend.structured("triage", VARIABLES, TriageResult)
        delivery = _finished(server.deliveries[0])
    # the client hung up long before the answer was out: a per-read timeout would have read it all
    assert delivery.closed_early and delivery.sent < delivery.total // 4, delivery
    assert len(server.requests) == 1  # the SDK did not retry past the deadline
    [stored] = cache.rows.values()
    assert "LlmTimeoutError" in stored.error and stored.attempts[0]["raw"] == ""  # type: ignore[attr-defined]
    assert backend.breaker.failures == 1


def test_the_run_budget_cuts_a_call_in_flight() -> None:
    """`run --budget` sets the budget's deadline; a call with a long timeout of its own stops there."""
    with ScriptedServer([Reply(VALID, drip_interval_s=DRIP_S)]) as server:
        budget = LlmBudget()
        backend = _backend(server, timeout_s=600.0, budget=budget)
        budget.set_deadline(1.0)
        with pytest.raises(LlmBudgetExceeded, match="time budget ran out during a call"):
            backend.structured("triage", VARIABLES, TriageResult)
        delivery = _finished(server.deliveries[0])
    assert delivery.closed_early and delivery.sent < delivery.total // 4, delivery
    assert backend.breaker.failures == 0  # the run's clock is not the endpoint's fault


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "no-length"])
def test_an_oversized_answer_is_refused_and_never_stored(declared: bool) -> None:
    cache = ListCache()
    with ScriptedServer([Reply(_huge_answer(), omit_length=not declared)]) as server:
        backend = _backend(server, timeout_s=120.0, cache=cache)
        with pytest.raises(LlmResponseTooLarge, match=f"size cap of {CAP} bytes") as info:
            backend.structured("triage", VARIABLES, TriageResult)
        delivery = _finished(server.deliveries[0])
    assert delivery.closed_early and delivery.sent < delivery.total  # the client stopped reading
    assert len(server.requests) == 1  # refused, not retried by the SDK
    [stored] = cache.rows.values()
    assert "size cap" in stored.error and stored.response is None  # type: ignore[attr-defined]
    assert len(stored.model_dump_json()) < 10_000  # type: ignore[attr-defined]  # nothing of the answer kept
    [attempt] = info.value.attempts
    assert attempt["raw"] == "" and attempt["usage"]["bytes_received"] <= CAP + 65536
    if declared:  # refused on its headers: not one byte of the body was read
        assert attempt["usage"]["bytes_received"] == 0
    assert backend.breaker.failures == 1


def test_a_compressed_answer_is_refused_as_its_size_cannot_be_capped() -> None:
    with ScriptedServer([Reply(VALID, gzip=True)]) as server:
        with pytest.raises(LlmTransportError, match="gzip"):
            _backend(server).structured("triage", VARIABLES, TriageResult)
    assert server.requests[0]["headers"]["accept-encoding"] == "identity"


def test_zero_reported_tokens_are_charged_by_the_bytes_received() -> None:
    answer = json.dumps({**json.loads(VALID), "reason": "y" * 400_000})
    replies = [Reply(answer, prompt_tokens=0, completion_tokens=0), Reply(VALID)]
    with ScriptedServer(replies) as server:
        backend = _backend(server, timeout_s=120.0, budget=LlmBudget(tokens=60_000))
        obj, record = backend.structured("triage", VARIABLES, TriageResult)
        received = server.deliveries[0].total
        charged = (received - ENVELOPE_BYTES) // MAX_BYTES_PER_TOKEN
        assert len(obj.reason) == 400_000
        assert record.completion_tokens == charged and backend.budget.used_tokens == charged
        [attempt] = record.attempts
        assert attempt["usage"]["charged_by_bytes"] and attempt["usage"]["reported"]["completion_tokens"] == 0
        assert attempt["usage"]["bytes_received"] == received
        # the next call expects an answer as large: it does not fit what is left of 60k tokens
        with pytest.raises(LlmBudgetExceeded, match="would be exceeded"):
            backend.structured("triage", {**VARIABLES, "title": "another"}, TriageResult)
    assert len(server.requests) == 1


def test_honest_counts_are_charged_as_reported() -> None:
    with ScriptedServer([Reply(VALID, prompt_tokens=900, completion_tokens=30)]) as server:
        backend = _backend(server)
        _, record = backend.structured("triage", VARIABLES, TriageResult)
    assert (record.prompt_tokens, record.completion_tokens) == (900, 30)
    assert backend.budget.used_tokens == 930 and "charged_by_bytes" not in record.attempts[0]["usage"]


def test_a_refused_answer_under_extract_is_a_recorded_failure_and_loses_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The CLI path: the report whose answer broke the cap is a failed extraction with the reason;
    the pattern stored before stays, and no row holds the answer."""
    from sqlalchemy import select
    from typer.testing import CliRunner

    from agent.cli.app import app
    from db import models
    from db.store import open_store
    from tests.agent.llm.fake_openai_server import schema_name
    from tests.agent.llm.test_llm_run import _answer, _counts, _dump, _env

    runner = CliRunner()
    db_url = f"sqlite:///{tmp_path / 'transfuzz.db'}"
    assert runner.invoke(app, ["--db", db_url, "ingest", "file", str(_dump(tmp_path, (1, 2, 3)))]).exit_code == 0
    extract = ["--db", db_url, "--json", "extract", "--llm", "openai", "--record-budget", "0"]
    with ScriptedServer([], responder=_answer) as server:  # a first good run stores one pattern
        first = runner.invoke(app, [*extract, "--limit", "1"], env=_env(server.base_url, tmp_path))
    assert first.exit_code == 0, first.stderr[-2000:]
    before = _counts(db_url)
    assert before["patterns"] == 1

    def huge_triage(body: dict) -> Reply:  # for case 2 only: case 3 is answered well
        hostile = schema_name(body) == "TriageResult" and "(case 2)" in json.dumps(body["messages"])
        return Reply(_huge_answer()) if hostile else _answer(body)

    with ScriptedServer([], responder=huge_triage) as server:
        result = runner.invoke(app, extract, env=_env(server.base_url, tmp_path, TRANSFUZZ_LLM_TIMEOUT="60s"))
    assert result.exit_code == 0, (result.stdout[-2000:], result.stderr[-2000:])
    summary = json.loads(result.stdout)
    assert summary["errors"] == 1 and "LlmResponseTooLarge" in summary["error_samples"][0]["error"]
    assert "size cap" in summary["error_samples"][0]["error"]
    store = open_store(db_url)
    try:
        with store.session() as session:
            calls = session.scalars(select(models.LlmCall)).all()
            failed = [c for c in calls if c.error]
            rows = session.execute(select(models.Issue.number, models.Issue.needs_extraction, models.Pattern.status,
                                          models.Pattern.error).join(models.Pattern)).all()
    finally:
        store.close()
    by_issue = {number: (due, status, error) for number, due, status, error in rows}
    assert by_issue[1][:2] == (False, "extracted") and by_issue[3][:2] == (False, "extracted")  # case 1's kept
    due, status, error = by_issue[2]
    assert (due, status) == (True, "error") and "size cap" in error  # recorded with the reason, due again
    assert failed and all("size cap" in c.error for c in failed)
    assert max(len(json.dumps(c.attempts)) + len(json.dumps(c.response)) for c in calls) < 20_000
