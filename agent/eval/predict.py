"""Predictions for labelled reports through any LLM backend (the offline analyzer is one).

The reports go through the same two prompt steps as ``transfuzz extract`` (triage, then the
pattern of a silent bug), with the variables the extract stage renders, so a model and the
analyzer are measured on exactly what the pipeline would ask them. Nothing is stored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from agent.eval.issue_labels import LabelledIssue
from agent.eval.labels import LabelledReport
from agent.eval.scoring import Prediction
from agent.llm.backend import LlmBackend
from agent.llm.errors import STAGE_STOPPING_ERRORS, LlmError
from agent.llm.schemas import PatternAnswer, TriageResult
from agent.patterns import KNOWN_MODES, PatternKind

ProgressFn = Callable[[int, int, str], None]


def report_variables(report: LabelledReport) -> dict[str, str]:
    """The prompt variables of one report, in the extract stage's shape (comments joined, one author)."""
    comments = "\n---\n".join(f"someone: {comment}" for comment in report.comments if comment)
    return {"title": report.title, "labels": ", ".join(report.tracker_labels), "body": report.body,
            "comments": comments}


def _triage_class(triage: TriageResult) -> str:
    if triage.false_alarm_class:
        return "not_a_bug"
    return "silent_bug" if triage.is_silent_bug else "not_silent"


def predict(backend: LlmBackend, report: LabelledReport) -> Prediction:
    """One report's prediction; a failed call is a prediction with its error (the run goes on).

    A spent budget or an endpoint that is down raises (STAGE_STOPPING_ERRORS): every later
    report would fail the same way, and scores over them would measure the outage.
    """
    return _predict(backend, report_variables(report))


def predict_issue(backend: LlmBackend, issue: LabelledIssue, recorded: Any = None) -> Prediction:
    """One real issue's prediction, asked exactly as the extract stage asks about a stored issue.

    The variables and the pattern step's semantic check are the extract stage's own, applied to the
    issue as ingest normalised it (a dump whose ``comments`` is a count has no comment texts).
    ``recorded`` is the RecordedFacts of the issue's repro run (record_issue_facts), given to the
    extractor as the extract stage gives it: the facts block and the recording beside the text.
    """
    from agent.extract.stage import _issue_variables, _pattern_check

    row = issue.issue if issue.issue.comments is not None else replace(issue.issue, comments=[])
    variables = _issue_variables(row, recorded)
    if recorded is not None:
        variables["recording"] = recorded.model_dump_json()
    return _predict(backend, variables, _pattern_check(row, recorded))


def record_issue_facts(issue: LabelledIssue, *, timeout_s: float | None = None) -> Any:
    """The RecordedFacts of the issue's repro, run once under the recorder in the sandbox; None without a repro.

    The same run and reading as the extract stage's (agent/extract/record_stage.py), nothing stored. A repro
    that raises, hangs or needs a missing device still gives facts with its run status.
    """
    from agent.extract.record_run import RECORD_TIMEOUT_S, record_repro
    from agent.extract.record_stage import facts_of_run, repro_of

    code = repro_of(issue.issue.body or "", [c.get("body") or "" for c in issue.issue.comments or []])
    if not code:
        return None
    return facts_of_run(record_repro(code, sandbox=True, timeout_s=timeout_s or RECORD_TIMEOUT_S))


def _predict(backend: LlmBackend, variables: dict[str, str], check: Callable[[Any], str | None] | None = None,
             ) -> Prediction:
    try:
        triage, _ = backend.structured("triage", variables, TriageResult)
    except STAGE_STOPPING_ERRORS:
        raise
    except LlmError as exc:
        return Prediction(triage="not_silent", error=f"triage: {exc}")
    triage_class = _triage_class(triage)
    if triage_class != "silent_bug":
        return Prediction(triage=triage_class, false_alarm_class=triage.false_alarm_class)
    pattern_variables = {**variables, "triage_reason": triage.reason,
                         "kinds": ", ".join(k.value for k in PatternKind), "modes": ", ".join(KNOWN_MODES)}
    try:
        answer, _ = backend.structured("pattern", pattern_variables, PatternAnswer, check=check)
    except STAGE_STOPPING_ERRORS:
        raise
    except LlmError as exc:  # the offline analyzer says "no pattern" this way
        return Prediction(triage=triage_class, error=None if backend.name == "offline" else f"pattern: {exc}")
    pattern = answer.pattern
    if pattern is None:
        return Prediction(triage=triage_class)
    return Prediction(triage=triage_class, kind=pattern.kind.value, api=pattern.api,
                      modes=(pattern.reference_mode.name, pattern.test_mode.name))


def predict_all(backend: LlmBackend, reports: list[LabelledReport],
                progress: ProgressFn | None = None) -> list[tuple[LabelledReport, Prediction]]:
    results = []
    for done, report in enumerate(reports, 1):
        results.append((report, predict(backend, report)))
        if progress is not None:
            progress(done, len(reports), report.id)
    return results


def predict_issues(backend: LlmBackend, issues: list[LabelledIssue], progress: ProgressFn | None = None,
                   *, record: bool = False) -> list[tuple[LabelledIssue, Prediction]]:
    """Every issue's prediction; with ``record``, each repro is first run under the recorder (sandboxed)."""
    results = []
    for done, issue in enumerate(issues, 1):
        recorded = record_issue_facts(issue) if record else None
        results.append((issue, predict_issue(backend, issue, recorded)))
        if progress is not None:
            progress(done, len(issues), f"#{issue.number}")
    return results
