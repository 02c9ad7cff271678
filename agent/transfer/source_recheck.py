"""The source re-check: does the bug a report describes still reproduce on this torch, and what says so.

Note [Source re-check]
Every transferred pattern keeps its own API as a candidate (status ``source``) so the reported bug is
checked on the torch installed here. The answer is decided, in this order, by
1. the report's own repro, run in the bubblewrap sandbox (agent/transfer/source_repro.py): a failing
   assertion or the script's own ``raise``/``sys.exit(N)`` means it reproduces; a clean run of a script
   with checks of its own means it does not; a clean run without checks decides only when it prints
   exactly two values that can be compared; anything else (an import error, no CUDA, a crash) is "no
   verdict from the script";
2. else the harness on the source API with the reported trigger: confirmed/crash/hang reproduce,
   passed does not; suspicious, inconclusive, flaky, not_applicable and error decide nothing.
A report that no longer reproduces and whose issue is closed (as completed, or with no reason recorded)
is "fixed in torch X"; one closed as not planned or a duplicate only "does not reproduce". The outcome
never holds back the transfer: a fixed bug is the best seed, its candidates are fuzzed like any other.
The record (``SourceRecheck``) is stored whole in ``patterns.source_check``, its outcome and basis in
their own columns (db/queries/source_recheck.py).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import Session

from agent.text_safety import one_line
from db.queries import source_recheck as q

Outcome = Literal["reproduces", "does_not_reproduce", "fixed", "inconclusive", "not_checked"]
Basis = Literal["report_repro", "harness"]
ReproStatus = Literal["reproduces", "does_not_reproduce", "no_verdict", "not_run"]

REPRODUCING_VERDICTS = ("confirmed", "crash", "hang")
NOT_REPRODUCING_VERDICTS = ("passed",)
FIXED_STATE_REASONS = (None, "completed")  # GitHub's reasons; older closed issues carry none
_REASON_CHARS = 300


class ReproRun(BaseModel):
    """One run of the report's own repro (or why it did not run)."""

    status: ReproStatus
    reason: str
    exit_code: int | None = None
    seconds: float | None = None
    output_tail: str = ""  # the script's last output, control characters removed; untrusted text
    torch: str | None = None
    retry: bool = False  # not run for a reason that may pass (no sandbox here): run it next time


class SourceRecheck(BaseModel):
    """The stored answer to "does the reported bug reproduce on this torch?" with its basis."""

    outcome: Outcome
    basis: Basis | None = None
    summary: str  # one line, as review show and reports print it
    detail: str = ""
    torch: str
    issue_state: str = "open"
    state_reason: str | None = None
    repro: ReproRun | None = None
    verdicts: list[str] = []  # the source harness's verdicts, in the order they came
    reason: str = ""  # the last harness verdict's reason
    trigger_used: bool | None = None  # the harness ran with conditions from the report's trigger

    @property
    def reproduces(self) -> bool | None:
        return {"reproduces": True, "does_not_reproduce": False, "fixed": False}.get(self.outcome)


@lru_cache(maxsize=1)
def torch_version() -> str:
    import torch

    return str(torch.__version__)


def _short(text: str) -> str:
    line = one_line(text or "")
    return line if len(line) <= _REASON_CHARS else line[: _REASON_CHARS - 1] + "…"


def basis_label(basis: str | None, trigger_used: bool | None) -> str:
    if basis == "report_repro":
        return "report's repro"
    if basis == "harness":
        return ("harness with the reported trigger" if trigger_used is not False
                else "harness with generated inputs (the report's trigger gave the fuzz core nothing to use)")
    return "nothing decided it"


def _closed_words(issue_state: str, state_reason: str | None) -> str:
    if issue_state != "closed":
        return "issue open"
    if state_reason is None:
        return "issue closed, no close reason recorded"
    return f"issue closed as {state_reason.replace('_', ' ')}"


def decide(*, repro: ReproRun | None, verdicts: list[str], harness_reason: str = "", trigger_used: bool | None = None,
           issue_state: str = "open", state_reason: str | None = None, torch: str) -> SourceRecheck:
    """The outcome by Note [Source re-check]: the report's repro first, else the harness."""
    harness = [v for v in verdicts if v]
    if repro is not None and repro.status in ("reproduces", "does_not_reproduce"):
        basis: Basis | None = "report_repro"
        reproduces: bool | None = repro.status == "reproduces"
    elif any(v in REPRODUCING_VERDICTS for v in harness):
        basis, reproduces = "harness", True
    elif any(v in NOT_REPRODUCING_VERDICTS for v in harness):
        basis, reproduces = "harness", False
    else:
        basis, reproduces = None, None

    parts = []
    if repro is None:
        parts.append("report's repro: not run yet")
    elif repro.status == "not_run":
        parts.append(f"report's repro not run: {_short(repro.reason)}")
    elif repro.status == "no_verdict":
        parts.append(f"report's repro ran; no verdict from the script: {_short(repro.reason)}")
    else:
        parts.append(f"report's repro: {_short(repro.reason)}")
    if harness:
        last = f" ({_short(harness_reason)})" if harness_reason else ""
        parts.append(f"harness: {', '.join(dict.fromkeys(harness))}{last}")
    else:
        parts.append("harness: not run yet")
    detail = "; ".join(parts)

    label = basis_label(basis, trigger_used)
    closed = issue_state == "closed"
    if reproduces is True:
        outcome: Outcome = "reproduces"
        summary = f"reproduces on torch {torch} ({label})"
    elif reproduces is False and closed and state_reason in FIXED_STATE_REASONS:
        outcome = "fixed"
        summary = f"fixed in torch {torch} (no longer reproduces: {label}; {_closed_words(issue_state, state_reason)})"
    elif reproduces is False:
        outcome = "does_not_reproduce"
        summary = f"does not reproduce on torch {torch} ({label}; {_closed_words(issue_state, state_reason)})"
    else:
        ran = (repro is not None and repro.status == "no_verdict") or bool(harness)
        outcome = "inconclusive" if ran else "not_checked"
        summary = f"{'inconclusive' if ran else 'not checked'} on torch {torch} ({detail})"
    return SourceRecheck(outcome=outcome, basis=basis, summary=summary, detail=detail, torch=torch,
                         issue_state=issue_state, state_reason=state_reason, repro=repro, verdicts=harness,
                         reason=harness_reason, trigger_used=trigger_used)


def stored_recheck(source_check: dict[str, Any] | None) -> SourceRecheck | None:
    """The stored record, or None for a pattern never re-checked (or stored before records were typed)."""
    if not source_check or "outcome" not in source_check:
        return None
    try:
        return SourceRecheck.model_validate(source_check)
    except ValidationError:
        return None


def _refresh(session: Session, pattern_id: int, *, repro: ReproRun | None = None,
             verdict: tuple[str, str, bool] | None = None) -> SourceRecheck | None:
    """Fold a new repro run or harness verdict into the stored record, decide again and store it."""
    state = q.source_state(session, pattern_id)
    if state is None:
        return None
    previous = stored_recheck(state.source_check)
    old = state.source_check or {}
    verdicts = list(previous.verdicts if previous else old.get("verdicts", []) or [])
    reason = previous.reason if previous else str(old.get("reason", "") or "")
    trigger_used = previous.trigger_used if previous else None
    if verdict is not None:
        verdicts.append(verdict[0])
        reason, trigger_used = verdict[1], verdict[2]
    run = repro if repro is not None else (previous.repro if previous else None)
    check = decide(repro=run, verdicts=verdicts, harness_reason=reason, trigger_used=trigger_used,
                   issue_state=state.issue_state, state_reason=state.state_reason,
                   torch=(run.torch if repro is not None and run is not None and run.torch else torch_version()))
    q.save_source_recheck(session, pattern_id, check.model_dump(mode="json"), outcome=check.outcome, basis=check.basis,
                          reproduces=check.reproduces)
    return check


def record_harness_verdict(session: Session, harness_id: int, verdict: str, reason: str) -> SourceRecheck | None:
    """When the harness re-checks a pattern's own API, fold its verdict into the pattern's re-check."""
    found = q.source_harness(session, harness_id)
    if found is None:
        return None
    pattern_id, trigger = found
    return _refresh(session, pattern_id, verdict=(verdict, reason, bool(trigger)))


def record_repro_run(session: Session, pattern_id: int, run: ReproRun) -> SourceRecheck | None:
    """Store one run of the report's repro (it replaces an earlier one) and decide again."""
    return _refresh(session, pattern_id, repro=run)


def recheck_text(summary: str | None, reproduces: bool | None) -> str:
    """What review and reports print: the stored summary, else the bare flag of a record stored before it had one."""
    if summary:
        return summary
    return {True: "reproduces (harness; recorded without a basis)",
            False: "does not reproduce (harness; recorded without a basis)",
            None: "not checked"}[reproduces]
