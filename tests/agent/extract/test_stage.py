"""The extraction stage on a real database (SQLite, and PostgreSQL when configured)."""

from __future__ import annotations

import json

from sqlalchemy import func, select, update

from agent.config import Settings
from agent.extract.stage import run_extraction
from agent.ingest import ingest_file
from agent.llm.offline import OfflineBackend
from agent.patterns import BugPattern, Mode, PatternKind, parse_formal
from db.models import ApiSemantics, Candidate, Issue, LlmCall, Pattern, Triage
from db.queries.extraction import mark_extracted
from db.queries.issues import IssueRow, upsert_issues
from tests.agent.llm.fake_openai_server import Reply, ScriptedServer, refused_url, schema_name
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
PATTERN_FIELDS = {
    "kind": "Precision_Mismatch", "api": "torch.cumsum",
    "reference_mode": {"name": "eager", "options": {}}, "test_mode": {"name": "dtype:bfloat16", "options": {}},
    "trigger": {"dtypes": [], "special_values": [], "layout": None, "shape": ["large"], "params": {"dim": "0"}},
    "oracle": {"kind": "ValueCorrectness", "tol": None, "rtol": None, "atol": None},
    "repro": "torch.cumsum(torch.ones(4096, dtype=torch.bfloat16), 0)", "source_issue": None, "confidence": 0.8,
}
PATTERN = json.dumps({"pattern": PATTERN_FIELDS, "no_pattern_reason": None})
SEMANTICS = json.dumps({"api": "torch.cumsum", "category": "scan", "summary": "Cumulative sum along dim.",
                        "parameters": [{"name": "dim", "role": "dim", "kind": "int", "default": None}],
                        "input_domain": None, "dtypes": ["float32"], "has_out": True, "has_inplace": True, "has_method": True})




def _openai(url: str, **kw) -> Settings:  # type: ignore[no-untyped-def]
    kw.setdefault("llm_timeout_s", 5)
    return Settings(db_url="sqlite://", llm="openai", openai_base_url=url, openai_api_key="dummy",
                    model=kw.pop("model", "gpt-4o-mini"), **kw)


def _silent_issue(store, number: int = 7) -> int:  # type: ignore[no-untyped-def]
    with store.session() as session:
        upsert_issues(session, [_row(number, f"cumsum in bf16 stops at 256 (report {number})", ISSUE_BODY, ["module: correctness (silent)"])])
        return session.scalar(select(Issue.id).where(Issue.number == number))


def _due(store) -> list[int]:  # type: ignore[no-untyped-def]
    from db.queries.extraction import issue_ids_to_extract

    with store.session() as session:
        return issue_ids_to_extract(session, "openai:gpt-4o-mini")


def test_openai_backend_through_the_stage_with_cache(store) -> None:  # type: ignore[no-untyped-def]
    _silent_issue(store)
    replies = [Reply(TRIAGE, prompt_tokens=100, completion_tokens=20), Reply(PATTERN), Reply(SEMANTICS)]
    with ScriptedServer(replies) as server:
        settings = _openai(server.base_url)
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
            assert all(c.latency_ms > 0 and c.attempts[0]["usage"]["prompt_tokens"] > 0 for c in calls)
            # a re-run of the same issue is answered from the cache: no request reaches the server
            session.execute(update(Issue).values(needs_extraction=True))
        requests_before = len(server.requests)
        rerun = run_extraction(store, settings)
        assert len(server.requests) == requests_before
        assert (rerun.extracted, rerun.llm_calls, rerun.cache_hits, rerun.tokens) == (1, 0, 2, 0)


def test_hallucinated_api_is_repaired_or_an_error_never_cached(store) -> None:  # type: ignore[no-untyped-def]
    issue_id = _silent_issue(store, 8)
    invented = PATTERN.replace("torch.cumsum", "torch.logcumsumexp")
    with ScriptedServer([Reply(TRIAGE), Reply(invented), Reply(invented)]) as server:
        summary = run_extraction(store, _openai(server.base_url, model="local-model"))
        assert "does not mention" in server.requests[2]["body"]["messages"][-1]["content"]  # the repair round
    assert summary.errors == 1 and "does not mention" in summary.error_samples[0]["error"]
    assert summary.cost_usd is None  # no public price for a local model
    with store.session() as session:
        assert session.scalar(select(Pattern.status)) == "error"
        assert session.scalar(select(Triage)) is None  # not final: the issue stays due
        assert session.scalar(select(Issue.needs_extraction).where(Issue.id == issue_id)) is True
        failed = session.scalar(select(LlmCall).where(LlmCall.prompt_name == "pattern"))
        assert failed.error and failed.response is None and len(failed.attempts) == 2
        assert failed.prompt_tokens == 22  # both paid attempts counted
    # next run: the bad answer is not replayed from the cache; a good one is stored
    with ScriptedServer([Reply(PATTERN), Reply(SEMANTICS)]) as server:
        again = run_extraction(store, _openai(server.base_url, model="local-model"))
    assert (again.extracted, again.errors, again.cache_hits) == (1, 0, 1)
    with store.session() as session:
        assert session.scalars(select(Pattern.status)).all() == ["extracted"]
        retried = session.scalar(select(LlmCall).where(LlmCall.prompt_name == "pattern"))
        assert retried.error is None and len(retried.attempts) == 3  # earlier failures kept in the record


def test_no_pattern_answer_is_stored_as_no_pattern(store) -> None:  # type: ignore[no-untyped-def]
    issue_id = _silent_issue(store)
    answer = json.dumps({"pattern": None, "no_pattern_reason": "A performance report."})
    with ScriptedServer([Reply(TRIAGE), Reply(answer)]) as server:
        summary = run_extraction(store, _openai(server.base_url))
    assert (summary.no_pattern, summary.errors, summary.extracted) == (1, 0, 0)
    with store.session() as session:
        row = session.scalar(select(Pattern))
        assert (row.status, row.error, row.kind) == ("no_pattern", "A performance report.", None)
        assert session.scalar(select(Issue.needs_extraction).where(Issue.id == issue_id)) is False
    assert _due(store) == []


def test_failure_after_a_good_extraction_loses_nothing(store) -> None:  # type: ignore[no-untyped-def]
    from agent.transfer.stage import run_transfer

    issue_id = _silent_issue(store)
    with ScriptedServer([Reply(TRIAGE), Reply(PATTERN), Reply(SEMANTICS)]) as server:
        run_extraction(store, _openai(server.base_url))
    assert run_transfer(store).patterns == 1
    with store.session() as session:
        good = session.scalar(select(Pattern))
        candidates = session.scalar(select(func.count()).select_from(Candidate))
        session.execute(update(Issue).values(needs_extraction=True))  # marked for re-extraction
        session.execute(update(LlmCall).values(error="forget the cache"))
    with ScriptedServer([Reply(status=500)] * 3) as server:
        failed = run_extraction(store, _openai(server.base_url))
    assert failed.errors == 1 and "answered 500" in failed.error_samples[0]["error"]
    with store.session() as session:
        rows = {p.status: p for p in session.scalars(select(Pattern))}
        assert set(rows) == {"transferred", "error"} and rows["transferred"].id == good.id
        assert session.scalar(select(func.count()).select_from(Candidate)) == candidates > 0
    assert _due(store) == [issue_id]
    # the next run succeeds with the same pattern: the stored row (and its candidates) is kept
    with ScriptedServer([Reply(TRIAGE), Reply(PATTERN)]) as server:
        again = run_extraction(store, _openai(server.base_url))
    assert (again.extracted, again.errors) == (1, 0)
    with store.session() as session:
        assert [p.id for p in session.scalars(select(Pattern))] == [good.id]
        assert session.scalar(select(func.count()).select_from(Candidate)) == candidates
    assert _due(store) == []


def test_failed_issues_go_to_the_back_of_the_queue(store) -> None:  # type: ignore[no-untyped-def]
    from db.queries.extraction import record_extraction_error

    first, second = _silent_issue(store, 1), _silent_issue(store, 2)
    with store.session() as session:
        record_extraction_error(session, first, "openai:gpt-4o-mini", "v", "boom")
    assert _due(store) == [second, first]


def test_endpoint_down_stops_the_stage_and_leaves_the_rest_due(store) -> None:  # type: ignore[no-untyped-def]
    ids = [_silent_issue(store, n) for n in range(1, 6)]
    url = refused_url()
    summary = run_extraction(store, _openai(url, llm_timeout_s=1, llm_breaker_failures=2, llm_concurrency=1))
    assert (summary.processed, summary.errors) == (2, 2)
    assert summary.endpoint_down and url in summary.stopped and "2 times in a row" in summary.stopped
    assert url in summary.error_samples[0]["error"]
    with store.session() as session:
        assert session.scalar(select(func.count()).select_from(Pattern)) == 2  # error rows of the two tried
    assert sorted(_due(store)) == ids


def test_call_budget_stops_between_issues(store) -> None:  # type: ignore[no-untyped-def]
    first, second = _silent_issue(store, 1), _silent_issue(store, 2)
    with ScriptedServer([Reply(TRIAGE), Reply(PATTERN), Reply(SEMANTICS), Reply(TRIAGE)]) as server:
        summary = run_extraction(store, _openai(server.base_url, llm_budget="3-calls", llm_concurrency=1))
        assert len(server.requests) == 3
    assert summary.budget_exhausted and "call budget" in summary.stopped and summary.extracted == 1
    with store.session() as session:
        assert session.scalars(select(Pattern.issue_id)).all() == [first]
    assert _due(store) == [second]


def _by_schema(body: dict) -> Reply:
    return {"TriageResult": Reply(TRIAGE), "PatternAnswer": Reply(PATTERN),
            "ApiSemanticsModel": Reply(SEMANTICS)}[schema_name(body)]


def test_parallel_extraction_stores_every_issue(store) -> None:  # type: ignore[no-untyped-def]
    ids = [_silent_issue(store, n) for n in range(1, 9)]
    with ScriptedServer([], responder=_by_schema) as server:
        summary = run_extraction(store, _openai(server.base_url, llm_concurrency=4))
    assert (summary.processed, summary.extracted, summary.errors) == (8, 8, 0), summary.error_samples
    with store.session() as session:
        assert sorted(session.scalars(select(Pattern.issue_id))) == ids
    assert _due(store) == []


def test_parallel_identical_questions_share_one_cache_row(store) -> None:  # type: ignore[no-untyped-def]
    with store.session() as session:  # duplicate reports: the same text asked by several workers at once
        upsert_issues(session, [_row(n, "cumsum in bf16 stops at 256", ISSUE_BODY, []) for n in range(1, 7)])
    with ScriptedServer([], responder=lambda body: Reply(_by_schema(body).content, delay_s=0.05)) as server:
        summary = run_extraction(store, _openai(server.base_url, llm_concurrency=6))
    assert (summary.extracted, summary.errors) == (6, 0), summary.error_samples
    with store.session() as session:
        assert session.scalar(select(func.count()).select_from(LlmCall)) == 3


def test_a_pattern_on_an_op_the_repro_ran_passes_the_mention_check() -> None:
    from types import SimpleNamespace

    from agent.extract.recorded import RecordedFacts
    from agent.extract.stage import _pattern_check
    from agent.llm.schemas import PatternAnswer

    issue = SimpleNamespace(title="a product differs under compile", body="```python\nz = helper(x)\n```")
    answer = PatternAnswer(pattern=BugPattern(kind=PatternKind.Compile_Eager_Mismatch, api="torch.mul",
                                              reference_mode=Mode(name="eager"), test_mode=Mode(name="compile:inductor")))
    assert "does not mention" in (_pattern_check(issue)(answer) or "")
    ran = RecordedFacts(run_status="ok", ran=["torch.randn", "torch.mul"])
    assert _pattern_check(issue, ran)(answer) is None


def test_an_op_the_repro_runs_through_an_operator_passes_the_mention_check() -> None:
    from types import SimpleNamespace

    from agent.extract.stage import _pattern_check
    from agent.llm.schemas import PatternAnswer

    def answer(api: str) -> PatternAnswer:
        return PatternAnswer(pattern=BugPattern(kind=PatternKind.JIT_Eager_Mismatch, api=api,
                                                reference_mode=Mode(name="eager"), test_mode=Mode(name="jit.trace")))

    issue = SimpleNamespace(title="traced function changes its argument",
                            body="```python\ndef f(x):\n    s = 0\n    s += x\n    return s\n```")
    assert _pattern_check(issue)(answer("torch.add")) is None  # ``s += x`` runs torch.add without naming it
    assert "does not mention" in (_pattern_check(issue)(answer("torch.mul")) or "")


def test_an_augmented_bitwise_update_runs_its_op_under_any_spelling() -> None:
    from types import SimpleNamespace

    from agent.extract.stage import _pattern_check
    from agent.llm.schemas import PatternAnswer

    def answer(api: str) -> PatternAnswer:
        return PatternAnswer(pattern=BugPattern(kind=PatternKind.JIT_Eager_Mismatch, api=api,
                                                reference_mode=Mode(name="eager"), test_mode=Mode(name="jit.script")))

    issue = SimpleNamespace(title="scripted update is lost",
                            body="```python\ndef f(x):\n    x[0, :] |= 1\n    return x\n```")
    assert _pattern_check(issue)(answer("torch.bitwise_or")) is None
    assert _pattern_check(issue)(answer("torch.Tensor.bitwise_or_")) is None
    assert "does not mention" in (_pattern_check(issue)(answer("torch.bitwise_and")) or "")
