"""The extraction stage: issues in the database → triages, formal patterns, API semantics.

Each issue is one transaction: its triage, its pattern rows (or a status row saying why there
is none) and the cleared ``needs_extraction`` flag are written together. A failure on one
issue is stored as a pattern row with status ``error`` and the run goes on; the flag stays set
so a later run retries it. Nothing here runs code from an issue.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from agent.config import Settings
from agent.llm.backend import CallRecord, LlmBackend
from agent.llm.errors import LlmBudgetExceeded, LlmError
from agent.llm.schemas import ApiSemanticsModel, TriageResult
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
    elapsed_s: float = 0.0

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


def _issue_variables(issue: Any) -> dict[str, str]:
    comments = "\n---\n".join(
        f"{c.get('author') or 'someone'}: {c.get('body') or ''}" for c in issue.comments if c.get("body")
    )
    return {"title": issue.title, "labels": ", ".join(issue.labels), "body": issue.body, "comments": comments}


def _api_occurs(api: str, text: str) -> bool:
    """Guard against a model naming an API the issue never mentions."""
    short = api.rsplit(".", 1)[-1]
    return short in text or (api in ("torch.matmul", "torch.mm") and "@" in text)


class _Run:
    def __init__(self, store: Any, backend: LlmBackend, summary: ExtractionSummary) -> None:
        self.store = store
        self.backend = backend
        self.summary = summary
        self.records: list[CallRecord] = []

    def call(self, prompt: str, variables: dict[str, Any], schema: type[BaseModel]) -> Any:
        obj, record = self.backend.structured(prompt, variables, schema)
        self.records.append(record)
        if self.backend.name != "offline":
            self.summary.llm_calls += 0 if record.cached else 1
            self.summary.cache_hits += 1 if record.cached else 0
            self.summary.prompt_tokens += 0 if record.cached else record.prompt_tokens
            self.summary.completion_tokens += 0 if record.cached else record.completion_tokens
        return obj

    def pattern_for(self, issue: Any, variables: dict[str, str], triage: TriageResult) -> BugPattern:
        pattern_vars = {
            **variables,
            "triage_reason": triage.reason,
            "kinds": ", ".join(k.value for k in PatternKind),
            "modes": ", ".join(KNOWN_MODES),
        }
        pattern: BugPattern = self.call("pattern", pattern_vars, BugPattern)
        if not _api_occurs(pattern.api, issue.title + "\n" + issue.body):
            raise LlmError(f"the pattern names {pattern.api}, which the issue does not mention")
        pattern = pattern.model_copy(update={"source_issue": f"{issue.repo}#{issue.number}"})
        formal = pattern.to_formal()
        if parse_formal(formal).formal_part() != pattern.formal_part():
            raise LlmError("the formal text of the pattern does not parse back to the same pattern")
        return pattern

    def semantics(self, api: str) -> ApiSemanticsModel | None:
        from agent.extract.semantics import UnknownApiError, first_doc_paragraph, signature_text

        try:
            variables = {"api": api, "signature": signature_text(api), "doc": first_doc_paragraph(api)}
        except UnknownApiError:
            return None
        return self.call("api_semantics", variables, ApiSemanticsModel)


def _store_semantics(session: Any, model: ApiSemanticsModel, source: str) -> None:
    import torch

    from db.queries.extraction import upsert_api_semantics

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


def run_extraction(
    store: Any,
    settings: Settings,
    *,
    limit: int | None = None,
    only_changed: bool = False,
    progress: ProgressFn | None = None,
    backend: LlmBackend | None = None,
) -> ExtractionSummary:
    """Extract every due issue (see db.queries.extraction); never stops on one issue's error."""
    from agent.llm.factory import cost_usd, make_backend
    from db.queries.extraction import (
        PatternValues,
        TriageValues,
        apis_with_semantics,
        issue_ids_to_extract,
        load_issues,
        mark_extracted,
        replace_patterns,
        upsert_triage,
    )

    started = time.perf_counter()
    backend = backend or make_backend(settings, store)
    extractor, version = extractor_identity(backend)
    summary = ExtractionSummary(extractor=extractor, extractor_version=version)
    run = _Run(store, backend, summary)
    with store.session() as session:
        ids = issue_ids_to_extract(session, extractor, only_changed=only_changed, limit=limit)
    summary.due = len(ids)
    semantics_known: set[str] = set()
    loaded: dict[int, Any] = {}
    for position, issue_id in enumerate(ids):
        if issue_id not in loaded:  # read ahead in chunks: one query per LOAD_CHUNK issues
            loaded.clear()
            with store.session() as session:
                loaded.update((i.id, i) for i in load_issues(session, ids[position : position + LOAD_CHUNK]))
        issue = loaded.get(issue_id)
        if issue is None:  # deleted since the id query
            continue
        label = f"{issue.repo}#{issue.number}"
        variables = _issue_variables(issue)
        triage: TriageResult | None = None
        rows: list[Any] = []
        semantics: ApiSemanticsModel | None = None
        error: str | None = None
        try:
            triage = run.call("triage", variables, TriageResult)
            if triage.false_alarm_class:
                rows = [PatternValues(status="false_alarm", confidence=triage.confidence, error=None)]
            elif not triage.is_silent_bug:
                rows = [PatternValues(status="not_silent", confidence=triage.confidence)]
            else:
                pattern = run.pattern_for(issue, variables, triage)
                rows = [
                    PatternValues(
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
                ]
                if pattern.api not in semantics_known:
                    with store.session() as session:
                        known = apis_with_semantics(session, [pattern.api])
                    if not known:
                        semantics = run.semantics(pattern.api)
                    semantics_known.add(pattern.api)
        except LlmBudgetExceeded:
            summary.budget_exhausted = True
            break
        except Exception as exc:  # one issue's failure is data, not the end of the run
            error = f"{type(exc).__name__}: {exc}"
        with store.session() as session:
            if triage is not None:
                upsert_triage(
                    session, issue.id, extractor, version,
                    TriageValues(triage.is_silent_bug, triage.has_repro, triage.false_alarm_class,
                                 triage.confidence, triage.reason),
                )
            if error is not None:
                replace_patterns(session, issue.id, extractor, version, [PatternValues(status="error", error=error[:4000])])
            else:
                replace_patterns(session, issue.id, extractor, version, rows)
                if semantics is not None:
                    _store_semantics(session, semantics, "offline" if backend.name == "offline" else extractor)
                mark_extracted(session, issue.id, issue.content_hash)
        summary.processed += 1
        if error is not None:
            summary.errors += 1
            if len(summary.error_samples) < MAX_ERROR_SAMPLES:
                summary.error_samples.append({"issue": label, "error": error[:300]})
        elif triage is not None and triage.false_alarm_class:
            summary.false_alarms[triage.false_alarm_class] = summary.false_alarms.get(triage.false_alarm_class, 0) + 1
        elif triage is not None and not triage.is_silent_bug:
            summary.not_silent += 1
        else:
            summary.extracted += 1
        summary.semantics_written += semantics is not None and error is None
        if progress is not None:
            progress(position + 1, len(ids), label)
    if backend.name != "offline":
        summary.cost_usd = cost_usd(backend.model, summary.prompt_tokens, summary.completion_tokens)
    else:
        summary.cost_usd = 0.0
    summary.elapsed_s = round(time.perf_counter() - started, 3)
    return summary

