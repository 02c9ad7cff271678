"""The end-of-run summary of `transfuzz run`: what THIS run did, and what to type next.

Stage figures come from the stages' own results (this run's ingest, extraction, transfer); verdicts
come from the findings the run's campaign stored (findings.run_id), so they are the figures
`transfuzz stats --run ID` prints for the same run. Database-wide totals are one line at the end.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from agent.cli.json_out import Measure, Versioned


class ReasonCount(BaseModel):
    reason: str
    count: int


class TopFinding(BaseModel):
    finding: int
    verdict: str
    api: str
    kind: str | None
    modes: str
    max_abs_diff: Measure = None
    source_issue: str | None
    is_source_recheck: bool


class StageCounts(BaseModel):
    """This run's stage figures (the work each stage did now, not what the database holds)."""

    issues_new: int = 0
    issues_updated: int = 0
    issues_unchanged: int = 0
    bad_records: int = 0
    issues_extracted: int = 0
    silent_bug_patterns: int = 0
    false_alarms: int = 0
    not_silent: int = 0
    extraction_errors: int = 0
    patterns_transferred: int = 0
    candidates: int = 0
    vetoed: int = 0
    harnesses_generated: int = 0
    harnesses_fuzzed: int = 0
    harnesses_left_pending: int = 0
    executions: int = 0


class RunSummary(BaseModel):
    """What this run did (`stats --run ID` repeats its figures)."""

    run_id: int | None
    elapsed_s: float
    fuzz_exit_reason: str | None
    stages: StageCounts
    verdicts: dict[str, int] = Field(description="Findings of this run per verdict.")
    inconclusive: int = Field(description="Harnesses with too few compared inputs to pass; the next fuzz retries them.")
    not_applicable: list[ReasonCount] = Field(description="not_applicable findings of this run, by reason.")
    top_confirmed: list[TopFinding]
    top_suspicious: list[TopFinding]
    database_totals: dict[str, int]
    next_steps: list[str]


class RunOutput(Versioned):
    """`transfuzz run --json`."""

    run: RunSummary
    stages: dict[str, Any] = Field(description="Each stage's own result, as the stage commands print it.")
    summary: dict[str, Any] = Field(description="Database-wide counts after the run (all runs together).")


def reason_key(reason: str) -> str:
    """Reasons differing only in their bracketed detail ("... [3 inputs agree]") are one reason."""
    text = (reason or "").strip()
    first = text.splitlines()[0] if text else "no reason recorded"
    return first.split(" [", 1)[0][:120]


def group_reasons(reasons: list[str]) -> list[ReasonCount]:
    counts = Counter(reason_key(r) for r in reasons)
    return [ReasonCount(reason=reason, count=n) for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def stage_counts(stages: dict[str, Any]) -> StageCounts:
    ingest, extract = stages.get("ingest", {}), stages.get("extract", {})
    transfer, fuzz = stages.get("transfer", {}), stages.get("fuzz", {})
    false_alarms = extract.get("false_alarms") or {}
    return StageCounts(
        issues_new=int(ingest.get("new", 0)), issues_updated=int(ingest.get("updated", 0)),
        issues_unchanged=int(ingest.get("unchanged", 0)), bad_records=int(ingest.get("bad_records", 0)),
        issues_extracted=int(extract.get("processed", 0)), silent_bug_patterns=int(extract.get("extracted", 0)),
        false_alarms=sum(int(n) for n in false_alarms.values()) if isinstance(false_alarms, dict) else 0,
        not_silent=int(extract.get("not_silent", 0)), extraction_errors=int(extract.get("errors", 0)),
        patterns_transferred=int(transfer.get("patterns", 0)), candidates=int(transfer.get("candidates", 0)),
        vetoed=int(transfer.get("vetoed", 0)), harnesses_generated=int(transfer.get("harnesses", 0)),
        harnesses_fuzzed=int(fuzz.get("harnesses", 0)), harnesses_left_pending=int(fuzz.get("left_pending", 0)),
        executions=int(fuzz.get("executions", 0)),
    )


def next_steps(db_option: str, verdicts: dict[str, int], left_pending: int) -> list[str]:
    """Commands to type next, with the --db this run used (so they read the same database)."""
    steps = []
    to_review = verdicts.get("confirmed", 0) + verdicts.get("suspicious", 0)
    if to_review:
        steps.append(f"transfuzz{db_option} review list        # {to_review} confirmed/suspicious to review")
        steps.append(f"transfuzz{db_option} review show ID     # values, evidence and repro of one finding")
        steps.append(f"transfuzz{db_option} export --out reports  # reports for accepted/confirmed findings")
    if left_pending:
        steps.append(f"transfuzz{db_option} fuzz --budget 10m  # {left_pending} harnesses still pending")
    if not steps:
        steps.append(f"transfuzz{db_option} review list --all  # every finding, passed ones included")
    return steps


def build_run_summary(store: Any, stages: dict[str, Any], *, elapsed_s: float, db_option: str,
                      top: int = 10) -> RunSummary:
    """Read this run's findings back (by the campaign's run id) and put them next to the stage figures."""
    from db.queries.stats import run_reasons, run_verdicts, save_pipeline_counts
    from db.queries.summary import pipeline_counts, top_findings

    counts = stage_counts(stages)
    run_id = stages.get("fuzz", {}).get("run_id")
    with store.session() as session:
        verdicts = run_verdicts(session, run_id) if run_id is not None else {}
        reasons = run_reasons(session, run_id, "not_applicable") if run_id is not None else []
        tops = {verdict: [TopFinding.model_validate(row) for row in
                          top_findings(session, (verdict,), limit=top, run_id=run_id)] if run_id is not None else []
                for verdict in ("confirmed", "suspicious")}
        totals = pipeline_counts(session)
        if run_id is not None:
            save_pipeline_counts(session, run_id, counts.model_dump() | {"elapsed_s": round(elapsed_s, 1)})
    database_totals = {key: int(totals[key]) for key in ("issues", "patterns", "candidates", "harnesses",
                                                           "harnesses_pending")}
    database_totals["findings"] = sum(totals["verdicts"].values())
    return RunSummary(
        run_id=run_id, elapsed_s=round(elapsed_s, 1), fuzz_exit_reason=stages.get("fuzz", {}).get("exit_reason"),
        stages=counts, verdicts=verdicts, inconclusive=verdicts.get("inconclusive", 0),
        not_applicable=group_reasons(reasons), top_confirmed=tops["confirmed"], top_suspicious=tops["suspicious"],
        database_totals=database_totals,
        next_steps=next_steps(db_option, verdicts, counts.harnesses_left_pending),
    )


def db_option(url: str) -> str:
    """` --db URL` for the commands in next_steps: empty when TRANSFUZZ_DB_URL or the default already names it."""
    from sqlalchemy.engine import make_url

    from db.engine import resolve_db_url

    if resolve_db_url(url) == resolve_db_url(None):
        return ""
    try:
        has_password = bool(make_url(url).password)
    except Exception:
        has_password = True
    return " --db URL" if has_password else f" --db {url}"  # never print a password
