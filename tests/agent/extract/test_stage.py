"""The extraction stage on a real database (SQLite, and PostgreSQL when configured)."""

from __future__ import annotations

import json

from sqlalchemy import select, update

from agent.config import Settings
from agent.extract.stage import run_extraction
from agent.ingest import ingest_file
from agent.llm.offline import OfflineBackend
from agent.patterns import parse_formal
from db.models import ApiSemantics, Issue, LlmCall, Pattern, Triage
from db.queries.extraction import mark_extracted
from db.queries.issues import IssueRow, upsert_issues
from tests.agent.llm.fake_openai_server import Reply, ScriptedServer
from tests.conftest import SAMPLE_ISSUES

OFFLINE = Settings(db_url="sqlite://", llm="offline")


def _offline() -> OfflineBackend:
    return OfflineBackend(use_opinfo=False)  # the OpInfo index has its own tests


def _row(number: int, title: str, body: str, labels: list[str]) -> IssueRow:
    return IssueRow(repo="acme/torchish", number=number, title=title, body=body, labels=labels, state="open",
                    created_at=None, updated_at=None, closed_at=None, url="", comments=[])


def test_samples_end_to_end_offline(store) -> None:  # type: ignore[no-untyped-def]
    ingest_file(store, SAMPLE_ISSUES)
    seen: list[tuple[int, int, str]] = []
    summary = run_extraction(store, OFFLINE, backend=_offline(), progress=lambda d, t, label: seen.append((d, t, label)))
    assert summary.processed == summary.due == len(seen) > 0
    assert summary.errors == 0
    assert summary.extracted >= 18
    assert sum(summary.false_alarms.values()) == 3
    with store.session() as session:
        patterns = session.scalars(select(Pattern)).all()
        extracted = [p for p in patterns if p.status == "extracted"]
        assert len(extracted) == summary.extracted
        for p in extracted:
            back = parse_formal(p.formal)
            assert (back.kind.value, back.api, back.test_mode.name) == (p.kind, p.api, p.test_mode)
            assert p.extractor == "offline" and p.extractor_version == "analyzer-1"
        assert {p.status for p in patterns} <= {"extracted", "not_silent", "false_alarm"}
        triages = session.scalars(select(Triage)).all()
        assert len(triages) == summary.processed
        assert session.scalar(select(Issue).where(Issue.needs_extraction.is_(True))) is None
        semantics = session.scalars(select(ApiSemantics.api)).all()
        assert len(semantics) == summary.semantics_written >= 15
        assert set(semantics) <= {p.api for p in extracted}
    again = run_extraction(store, OFFLINE, backend=_offline())
    assert again.due == 0


def test_only_changed_and_error_rows(store) -> None:  # type: ignore[no-untyped-def]
    with store.session() as session:
        upsert_issues(session, [
            _row(1, "torch.cumsum differs under torch.compile",
                 "wrong values\n```python\nimport torch\nx = torch.arange(5.)\nprint(torch.compile(torch.cumsum)(x, 0), torch.cumsum(x, 0))\n```",
                 ["module: correctness (silent)"]),
            _row(2, "Numbers are silently wrong", "Everything is wrong and differs, no code.", ["module: correctness (silent)"]),
        ])
    first = run_extraction(store, OFFLINE, backend=_offline())
    assert (first.processed, first.extracted, first.errors) == (2, 1, 1)
    assert "no torch API" in first.error_samples[0]["error"]
    with store.session() as session:
        broken = session.scalar(select(Issue).where(Issue.number == 2))
        assert broken.needs_extraction  # retried next time
        status = session.scalars(select(Pattern.status).where(Pattern.issue_id == broken.id)).all()
        assert status == ["error"]
    # only the failed issue is due again; editing issue 1 makes it due under --only-changed
    assert run_extraction(store, OFFLINE, backend=_offline(), only_changed=True).due == 1
    with store.session() as session:
        upsert_issues(session, [_row(1, "torch.cumsum differs under torch.compile (edited)",
                                     "wrong\n```python\nimport torch\nx = torch.arange(5.)\nprint(torch.compile(torch.cumprod)(x, 0))\n```",
                                     ["module: correctness (silent)"])])
    changed = run_extraction(store, OFFLINE, backend=_offline(), only_changed=True, limit=1)
    assert changed.due == 1
    with store.session() as session:
        issue1 = session.scalar(select(Issue).where(Issue.number == 1))
        rows = session.scalars(select(Pattern).where(Pattern.issue_id == issue1.id)).all()
        assert len(rows) == 1  # re-extraction replaced the old pattern


def test_flag_survives_a_change_during_extraction(store) -> None:  # type: ignore[no-untyped-def]
    with store.session() as session:
        upsert_issues(session, [_row(5, "t", "b", [])])
        issue = session.scalar(select(Issue))
        assert not mark_extracted(session, issue.id, "some-older-hash")
        assert session.scalar(select(Issue.needs_extraction).where(Issue.id == issue.id)) is True
        assert mark_extracted(session, issue.id, issue.content_hash)


ISSUE_BODY = "```python\nimport torch\nx = torch.ones(4096, dtype=torch.bfloat16)\nprint(torch.cumsum(x, 0)[-1])\n```"
TRIAGE = json.dumps({"is_silent_bug": True, "has_repro": True, "false_alarm_class": None, "confidence": 0.9, "reason": "bf16 cumsum"})
PATTERN = json.dumps({
    "kind": "Precision_Mismatch", "api": "torch.cumsum",
    "reference_mode": {"name": "eager", "options": {}}, "test_mode": {"name": "dtype:bfloat16", "options": {}},
    "trigger": {"dtypes": [], "special_values": [], "layout": None, "shape": ["large"], "params": {"dim": "0"}},
    "oracle": {"kind": "ValueCorrectness", "tol": None, "rtol": None, "atol": None},
    "repro": "torch.cumsum(torch.ones(4096, dtype=torch.bfloat16), 0)", "source_issue": None, "confidence": 0.8,
})
SEMANTICS = json.dumps({"api": "torch.cumsum", "category": "scan", "summary": "Cumulative sum along dim.",
                        "parameters": [{"name": "dim", "role": "dim", "kind": "int", "default": None}],
                        "input_domain": None, "dtypes": ["float32"], "has_out": True, "has_inplace": True, "has_method": True})


def test_openai_backend_through_the_stage_with_cache(store) -> None:  # type: ignore[no-untyped-def]
    with store.session() as session:
        upsert_issues(session, [_row(7, "cumsum in bf16 stops at 256", ISSUE_BODY, ["module: correctness (silent)"])])
    replies = [Reply(TRIAGE, prompt_tokens=100, completion_tokens=20), Reply(PATTERN), Reply(SEMANTICS)]
    with ScriptedServer(replies) as server:
        settings = Settings(db_url="sqlite://", llm="openai", openai_base_url=server.base_url,
                            openai_api_key="dummy", model="gpt-4o-mini", llm_timeout_s=5)
        summary = run_extraction(store, settings)
        assert (summary.extracted, summary.errors, summary.llm_calls) == (1, 0, 3)
        assert summary.prompt_tokens == 100 + 11 + 11 and summary.completion_tokens == 20 + 7 + 7
        assert summary.cost_usd is not None and summary.cost_usd > 0
        assert summary.extractor == "openai:gpt-4o-mini"
        with store.session() as session:
            pattern = session.scalar(select(Pattern))
            assert (pattern.status, pattern.api, pattern.test_mode) == ("extracted", "torch.cumsum", "dtype:bfloat16")
            assert session.scalar(select(ApiSemantics.source)) == "openai:gpt-4o-mini"
            calls = session.scalars(select(LlmCall)).all()
            assert sorted(c.prompt_name for c in calls) == ["api_semantics", "pattern", "triage"]
            # a re-run of the same issue is answered from the cache: no request reaches the server
            session.execute(update(Issue).values(needs_extraction=True))
        requests_before = len(server.requests)
        rerun = run_extraction(store, settings)
        assert len(server.requests) == requests_before
        assert (rerun.extracted, rerun.llm_calls, rerun.cache_hits, rerun.tokens) == (1, 0, 2, 0)


def test_hallucinated_api_is_an_error_row(store) -> None:  # type: ignore[no-untyped-def]
    with store.session() as session:
        upsert_issues(session, [_row(8, "cumsum in bf16 stops at 256", ISSUE_BODY, ["module: correctness (silent)"])])
    invented = PATTERN.replace("torch.cumsum", "torch.logcumsumexp")
    with ScriptedServer([Reply(TRIAGE), Reply(invented)]) as server:
        settings = Settings(db_url="sqlite://", llm="openai", openai_base_url=server.base_url,
                            openai_api_key="dummy", model="local-model", llm_timeout_s=5)
        summary = run_extraction(store, settings)
    assert summary.errors == 1 and "does not mention" in summary.error_samples[0]["error"]
    assert summary.cost_usd is None  # no public price for a local model
    with store.session() as session:
        assert session.scalar(select(Pattern.status)) == "error"
        assert session.scalar(select(Triage.is_silent_bug)) is True


def test_endpoint_down_records_errors_and_goes_on(store) -> None:  # type: ignore[no-untyped-def]
    with store.session() as session:
        upsert_issues(session, [_row(n, f"issue {n}", ISSUE_BODY, []) for n in (1, 2)])
    settings = Settings(db_url="sqlite://", llm="openai", openai_base_url="http://127.0.0.1:9/v1",
                        openai_api_key="dummy", model="m", llm_timeout_s=2)
    summary = run_extraction(store, settings)
    assert (summary.processed, summary.errors) == (2, 2)
    assert "LlmTransportError" in summary.error_samples[0]["error"]
