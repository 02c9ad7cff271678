"""The extraction stage: issues in the database → triages, formal patterns, API semantics.

Each issue's LLM work runs outside any transaction (in parallel up to the backend's
concurrency); its results are then written in one short transaction: triage, pattern rows (or a
status row saying why there is none) and the cleared ``needs_extraction`` flag. A failure on one
issue is stored as an ``error`` row beside the issue's earlier patterns, which stay, and the
issue stays due (Note [A failed extraction loses nothing] in db/queries/extraction.py). A spent
budget or an endpoint that is down stops the stage: what is left stays due for the next run.
Nothing here runs code from an issue; asked to (``recording``), the due reports' repros run first, sandboxed,
under the recorder (agent/extract/record_stage.py) and what they ran reaches the extractor as data.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from agent.config import Settings
from agent.llm.backend import LlmBackend
from agent.llm.errors import STAGE_STOPPING_ERRORS, LlmBudgetExceeded, LlmConfigError, LlmError
from agent.llm.schemas import ApiSemanticsModel, PatternAnswer, TriageResult
from agent.patterns import KNOWN_MODES, BugPattern, PatternKind, parse_formal

ProgressFn = Callable[[int, int, str], None]
MAX_ERROR_SAMPLES = 20
LOAD_CHUNK = 100


class ExtractionSummary(BaseModel):
    """What one ``extract`` run did; printed by the CLI and returned to the pipeline."""

    extractor: str
    extractor_version: str
    due: int = 0
    processed: int = 0
    extracted: int = 0
    not_silent: int = 0
    no_pattern: int = 0
    false_alarms: dict[str, int] = Field(default_factory=dict)
    errors: int = 0
    error_samples: list[dict[str, Any]] = Field(default_factory=list)
    semantics_written: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    budget_exhausted: bool = False
    # why the stage stopped before the end (budget spent, endpoint down); None = ran to the end
    stopped: str | None = None
    endpoint_down: bool = False
    elapsed_s: float = 0.0
    # the sandboxed recorded runs of the reports' repros (agent/extract/record_stage.py); None when not asked
    recordings: dict[str, Any] | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with the token total (the pipeline's summary and ``--json`` use this)."""
        return {**self.model_dump(mode="json"), "tokens": self.tokens}


def extractor_identity(backend: LlmBackend) -> tuple[str, str]:
    """(extractor name, version) stored with every row: the backend and its prompt versions."""
    if backend.name == "offline":
        from agent.extract.analyzer import ANALYZER_VERSION

        return "offline", f"analyzer-{ANALYZER_VERSION}"
    from agent.llm.prompts import prompt_version

    version = "+".join(f"{name}-{prompt_version(name)}" for name in ("triage", "pattern", "api_semantics"))
    return f"openai:{backend.model}"[:50], version[:50]


def _issue_variables(issue: Any, recorded: Any = None) -> dict[str, str]:
    """The prompt variables of one issue: its text, its state, and the recorded facts of its repro when it ran.

    ``issue`` is a stored issue (IssueForExtraction) or an ingested row (IssueRow, whose ``raw`` keeps the
    record's ``state_reason``); ``recorded`` is the RecordedFacts of its repro's recorded run, or None
    (Note [Recorded facts in the prompt] in agent/extract/facts_block.py).
    """
    from agent.extract.facts_block import facts_block

    comments = "\n---\n".join(
        f"{c.get('author') or 'someone'}: {c.get('body') or ''}" for c in issue.comments if c.get("body")
    )
    raw = getattr(issue, "raw", None)
    state_reason = getattr(issue, "state_reason", None) or (raw.get("state_reason") if isinstance(raw, dict) else None)
    return {"title": issue.title, "labels": ", ".join(issue.labels), "body": issue.body, "comments": comments,
            "state": str(getattr(issue, "state", "") or ""), "state_reason": str(state_reason or ""),
            "recorded_facts": facts_block(recorded)}


_INDEXED_WRITE = re.compile(r"\][ \t]*[-+*/]?=(?!=)")


def _api_occurs(api: str, text: str) -> bool:
    """Guard against a model naming an API the issue never mentions (operators spell some: ``@``, ``x[i] = v``)."""
    short = api.rsplit(".", 1)[-1]
    return short in text or (api in ("torch.matmul", "torch.mm") and "@" in text) or (
        short in ("index_put_", "index_put", "__setitem__") and _INDEXED_WRITE.search(text) is not None)


def _op_leaf(api: str) -> str:
    """An op's name whatever its spelling: ``x[i] |= 1`` runs torch.Tensor.bitwise_or_, a pattern may say torch.bitwise_or."""
    leaf = api.rsplit(".", 1)[-1]
    return leaf[:-1] if leaf.endswith("_") and not leaf.endswith("__") else leaf


def _pattern_check(issue: Any, recorded: Any = None) -> Callable[[PatternAnswer], str | None]:
    """Semantic post-checks of a pattern answer; a failure goes back through the repair round.

    An API counts as the issue's when its text mentions it, its repro's code runs it through an operator
    (``a + b`` runs torch.add without naming it), or the repro's recorded run (``recorded``, the RecordedFacts)
    shows the op ran.
    """
    text = "\n".join([issue.title, issue.body, *((c.get("body") or "") for c in getattr(issue, "comments", None) or [])])
    ran = set(getattr(recorded, "ran", None) or [])
    operators: frozenset[str] | None = None

    def check(answer: PatternAnswer) -> str | None:
        nonlocal operators
        pattern = answer.pattern
        if pattern is None:
            return None
        if not _api_occurs(pattern.api, text) and pattern.api not in ran:
            if operators is None:  # read only when needed: the repro's arithmetic runs these ops unnamed
                from agent.extract.analyzer import operator_ops

                operators = operator_ops(text)
            if _op_leaf(pattern.api) not in {_op_leaf(op) for op in operators}:
                return f"the pattern names {pattern.api}, which the issue does not mention and its repro did not run"
        try:
            back = parse_formal(pattern.to_formal())
        except Exception as exc:  # the formal printer/parser pair rejected it: tell the model
            return f"the formal text of the pattern does not parse: {exc}"
        if back.formal_part() != pattern.formal_part():
            return "the formal text of the pattern does not parse back to the same pattern"
        return None

    return check


def _semantics_check(api: str) -> Callable[[ApiSemanticsModel], str | None]:
    def check(model: ApiSemanticsModel) -> str | None:
        return None if model.api == api else f"api must be exactly {api!r}, the API asked about, not {model.api!r}"

    return check


@dataclass
class IssueOutcome:
    """What the LLM work on one issue produced; written by the main thread in one transaction."""

    issue: Any
    triage: TriageResult | None = None
    rows: list[Any] = field(default_factory=list)
    semantics: ApiSemanticsModel | None = None
    error: str | None = None
    stopped: str | None = None  # budget spent / endpoint down: nothing is written, the issue stays due
    endpoint_down: bool = False


class _Run:
    def __init__(self, store: Any, backend: LlmBackend, summary: ExtractionSummary) -> None:
        self.store = store
        self.backend = backend
        self.summary = summary
        self.semantics_known: set[str] = set()
        self.stop_reason: tuple[str, bool] | None = None  # (message, endpoint down) once a call stopped the stage
        self.recorded: dict[int, Any] = {}  # issue id -> RecordedFacts of its repro's recorded run
        self._lock = threading.Lock()

    def _count(self, cached: bool, prompt_tokens: int, completion_tokens: int) -> None:
        if self.backend.name == "offline":
            return
        with self._lock:
            self.summary.llm_calls += 0 if cached else 1
            self.summary.cache_hits += 1 if cached else 0
            self.summary.prompt_tokens += prompt_tokens
            self.summary.completion_tokens += completion_tokens

    def call(self, prompt: str, variables: dict[str, Any], schema: type[BaseModel],
             check: Callable[[Any], str | None] | None = None) -> Any:
        try:
            obj, record = self.backend.structured(prompt, variables, schema, check=check)
        except LlmError as exc:  # failed requests cost tokens too
            usage = [a.get("usage") or {} for a in exc.attempts]
            if usage:
                self._count(False, sum(u.get("prompt_tokens", 0) for u in usage),
                            sum(u.get("completion_tokens", 0) for u in usage))
            raise
        self._count(record.cached, 0 if record.cached else record.prompt_tokens,
                    0 if record.cached else record.completion_tokens)
        return obj

    def pattern_for(self, issue: Any, variables: dict[str, str], triage: TriageResult) -> BugPattern | str:
        """The issue's pattern, or the model's reason why the report yields none."""
        pattern_vars = {
            **variables,
            "triage_reason": triage.reason,
            "kinds": ", ".join(k.value for k in PatternKind),
            "modes": ", ".join(KNOWN_MODES),
        }
        answer: PatternAnswer = self.call("pattern", pattern_vars, PatternAnswer,
                                         _pattern_check(issue, self.recorded.get(issue.id)))
        if answer.pattern is None:
            return answer.no_pattern_reason or "no pattern"
        return answer.pattern.model_copy(update={"source_issue": f"{issue.repo}#{issue.number}"})

    def semantics(self, api: str) -> ApiSemanticsModel | None:
        from agent.extract.semantics import UnknownApiError, first_doc_paragraph, signature_text

        with self._lock:
            if api in self.semantics_known:
                return None
            self.semantics_known.add(api)
        from db.queries.extraction import apis_with_semantics

        with self.store.session() as session:
            if apis_with_semantics(session, [api]):
                return None
        try:
            variables = {"api": api, "signature": signature_text(api), "doc": first_doc_paragraph(api)}
        except UnknownApiError:
            return None
        return self.call("api_semantics", variables, ApiSemanticsModel, _semantics_check(api))

    def extract_issue(self, issue: Any) -> IssueOutcome:
        """The LLM work for one issue; no database writes (safe in a worker thread)."""
        from db.queries.extraction import PatternValues

        outcome = IssueOutcome(issue=issue)
        if self.stop_reason is not None:  # issues queued before the stop are left due
            outcome.stopped, outcome.endpoint_down = self.stop_reason
            return outcome
        variables = _issue_variables(issue, self.recorded.get(issue.id))
        if issue.id in self.recorded:  # what the repro ran, as data beside the text
            variables["recording"] = self.recorded[issue.id].model_dump_json()
        try:
            triage = outcome.triage = self.call("triage", variables, TriageResult)
            if triage.false_alarm_class:
                outcome.rows = [PatternValues(status="false_alarm", confidence=triage.confidence)]
            elif not triage.is_silent_bug:
                outcome.rows = [PatternValues(status="not_silent", confidence=triage.confidence)]
            else:
                found = self.pattern_for(issue, variables, triage)
                if isinstance(found, str):
                    outcome.rows = [PatternValues(status="no_pattern", confidence=triage.confidence, error=found[:4000])]
                else:
                    outcome.rows = [_pattern_values(found)]
                    outcome.semantics = self.semantics(found.api)
        except STAGE_STOPPING_ERRORS as exc:
            outcome.stopped = str(exc)
            outcome.endpoint_down = not isinstance(exc, LlmBudgetExceeded)
            with self._lock:
                self.stop_reason = self.stop_reason or (outcome.stopped, outcome.endpoint_down)
        except LlmConfigError:
            raise  # a broken setup stops the command with a clear message
        except Exception as exc:  # one issue's failure is data, not the end of the run
            outcome.error = f"{type(exc).__name__}: {exc}"
        return outcome


def _pattern_values(pattern: BugPattern) -> Any:
    from db.queries.extraction import PatternValues

    return PatternValues(
        status="extracted",
        kind=pattern.kind.value,
        api=pattern.api,
        reference_mode=pattern.reference_mode.name,
        test_mode=pattern.test_mode.name,
        trigger=pattern.trigger.model_dump(mode="json"),
        oracle=pattern.oracle.model_dump(mode="json"),
        formal=pattern.to_formal(),
        repro=pattern.repro,
        confidence=pattern.confidence,
    )


def _store_semantics(session: Any, model: ApiSemanticsModel, source: str) -> None:
    import torch

    from db.queries.extraction import upsert_api_semantics
    from fuzz_core.api_names import is_public_api

    if not is_public_api(model.api):  # the inventory never holds a name outside torch's public API
        return
    upsert_api_semantics(
        session,
        api=model.api,
        category=model.category,
        summary=model.summary,
        parameters=[p.model_dump() for p in model.parameters],
        dtypes=list(model.dtypes),
        details={
            "input_domain": model.input_domain,
            "has_out": model.has_out,
            "has_inplace": model.has_inplace,
            "has_method": model.has_method,
        },
        source=source,
        torch_version=torch.__version__,
    )


def _store_outcome(store: Any, outcome: IssueOutcome, extractor: str, version: str, semantics_source: str) -> None:
    """One short transaction per issue; a failure leaves stored patterns alone and the issue due."""
    from db.queries.extraction import (
        TriageValues,
        mark_extracted,
        record_extraction_error,
        replace_patterns,
        upsert_triage,
    )

    issue, triage = outcome.issue, outcome.triage
    with store.session() as session:
        if outcome.error is not None:
            record_extraction_error(session, issue.id, extractor, version, outcome.error[:4000])
            return
        if triage is not None:
            upsert_triage(
                session, issue.id, extractor, version,
                TriageValues(triage.is_silent_bug, triage.has_repro, triage.false_alarm_class,
                             triage.confidence, triage.reason),
            )
        replace_patterns(session, issue.id, extractor, version, outcome.rows)
        if outcome.semantics is not None:
            _store_semantics(session, outcome.semantics, semantics_source)
        mark_extracted(session, issue.id, issue.content_hash)


def _count_outcome(summary: ExtractionSummary, outcome: IssueOutcome) -> None:
    triage = outcome.triage
    summary.processed += 1
    if outcome.error is not None:
        summary.errors += 1
        if len(summary.error_samples) < MAX_ERROR_SAMPLES:
            summary.error_samples.append({"issue": f"{outcome.issue.repo}#{outcome.issue.number}",
                                          "error": outcome.error[:300]})
    elif triage is not None and triage.false_alarm_class:
        summary.false_alarms[triage.false_alarm_class] = summary.false_alarms.get(triage.false_alarm_class, 0) + 1
    elif triage is not None and not triage.is_silent_bug:
        summary.not_silent += 1
    elif outcome.rows and outcome.rows[0].status == "no_pattern":
        summary.no_pattern += 1
    else:
        summary.extracted += 1
    summary.semantics_written += outcome.semantics is not None and outcome.error is None


def _outcomes(run: _Run, store: Any, ids: list[int], workers: int) -> Iterator[IssueOutcome]:
    """Issue outcomes in id order, ``workers`` issues in flight at once; chunks are read lazily."""
    from db.queries.extraction import load_issues

    pool = ThreadPoolExecutor(workers, thread_name_prefix="extract") if workers > 1 else None
    try:
        for start in range(0, len(ids), LOAD_CHUNK):
            if run.stop_reason is not None:
                return
            with store.session() as session:
                issues = load_issues(session, ids[start : start + LOAD_CHUNK])  # deleted ones drop out
            yield from (pool.map(run.extract_issue, issues) if pool else map(run.extract_issue, issues))
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def run_extraction(
    store: Any,
    settings: Settings,
    *,
    limit: int | None = None,
    only_changed: bool = False,
    progress: ProgressFn | None = None,
    backend: LlmBackend | None = None,
    recording: Any | None = None,
) -> ExtractionSummary:
    """Extract every due issue (see db.queries.extraction); never stops on one issue's error."""
    from agent.llm.factory import cost_usd, make_backend
    from db.queries.extraction import issue_ids_to_extract

    started = time.perf_counter()
    backend = backend or make_backend(settings, store)
    extractor, version = extractor_identity(backend)
    semantics_source = "offline" if backend.name == "offline" else extractor
    summary = ExtractionSummary(extractor=extractor, extractor_version=version)
    run = _Run(store, backend, summary)
    with store.session() as session:
        ids = issue_ids_to_extract(session, extractor, only_changed=only_changed, limit=limit)
    summary.due = len(ids)
    if recording is not None:  # RecordingOptions: run the due reports' repros under the recorder, sandboxed
        from agent.extract.record_stage import record_issues

        run.recorded, recorded = record_issues(store, ids, recording)
        summary.recordings = recorded.model_dump()
    workers = max(1, int(getattr(backend, "concurrency", 1)))
    for position, outcome in enumerate(_outcomes(run, store, ids, workers)):
        if outcome.stopped is not None:  # nothing written: the issue stays due
            if summary.stopped is None:
                summary.stopped = outcome.stopped
            summary.endpoint_down |= outcome.endpoint_down
            summary.budget_exhausted |= not outcome.endpoint_down
            continue  # later outcomes already paid for are still stored
        _store_outcome(store, outcome, extractor, version, semantics_source)
        _count_outcome(summary, outcome)
        if progress is not None:
            progress(position + 1, len(ids), f"{outcome.issue.repo}#{outcome.issue.number}")
    summary.cost_usd = 0.0 if backend.name == "offline" else cost_usd(
        backend.model, summary.prompt_tokens, summary.completion_tokens)
    summary.elapsed_s = round(time.perf_counter() - started, 3)
    return summary
