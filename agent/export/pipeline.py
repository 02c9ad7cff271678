"""The export stage: select findings from the database, group them by signature, write the reports."""

from __future__ import annotations

from pathlib import Path

from agent.export.environment import Environment, capture_environment
from agent.export.writer import ExportIndex, Format, write_export
from db.queries.findings import findings_for_export, group_by_signature
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
        groups = group_by_signature(findings_for_export(session, status))
    # Read everything first, then capture the environment: no transaction stays open meanwhile.
    env = environment if environment is not None else capture_environment()
    return write_export(
        groups, out, status=status, fmt=fmt, environment=env, check_repro=check_repro, repro_timeout_s=repro_timeout_s,
        sandbox=sandbox,
    )
