"""The export stage: select findings, group them by root cause (Note [Root-cause groups]), ask "already reported?", write the reports."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from agent.export.environment import Environment, capture_environment
from agent.export.writer import ExportIndex, Format, GroupContext, write_export
from agent.review.grouping import RootCauseGroup, group_by_root_cause
from agent.review.known import known_for_group
from db.queries.findings import findings_for_export
from db.store import Store

EXPORT_STATUSES = ("confirmed", "accepted")


def export_findings(
    store: Store,
    out: Path,
    *,
    status: str = "confirmed",
    fmt: Format = "markdown",
    environment: Environment | None = None,
    check_repro: bool = False,
    repro_timeout_s: float = 120.0,
    sandbox: bool = True,
) -> ExportIndex:
    """Write one report per signature group of the selected findings; returns the index written."""
    if status not in EXPORT_STATUSES:
        raise ValueError(f"unknown export status {status!r}; expected one of {', '.join(EXPORT_STATUSES)}")
    with store.session() as session:
        root_groups = group_by_root_cause(findings_for_export(session, status))
        contexts = {group.cause.key: group_context(session, group) for group in root_groups}
    groups = [group.as_signature_group() for group in root_groups]
    # Read everything first, then capture the environment: no transaction stays open meanwhile.
    env = environment if environment is not None else capture_environment()
    return write_export(
        groups, out, status=status, fmt=fmt, environment=env, check_repro=check_repro, repro_timeout_s=repro_timeout_s,
        sandbox=sandbox, contexts=contexts,
    )


def group_context(session: Any, group: RootCauseGroup) -> GroupContext:
    """Root cause and "already reported?" for one group (agent/review/known.py)."""
    known = known_for_group(session, group)
    return GroupContext(
        root_cause=group.cause.text,
        possible_duplicates=[{"ref": f"{m.repo}#{m.number}", "url": m.url, "title": m.title, "state": m.state,
                              "matched": m.matched, "relation": m.relation, "note": m.note} for m in known.issues],
        opinfo_known=[asdict(e) for e in known.opinfo],
        known_expected_failure=known.known_expected_failure,
    )
