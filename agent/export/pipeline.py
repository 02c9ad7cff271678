"""The export stage: select findings, group them by root cause (Note [Root-cause groups]), ask "already reported?", write the reports.

Note [Exporting a selection]
The review page's "Export selection" (/export, /api/export) and `transfuzz export` write their reports
through the same steps: report_groups (THE root-cause grouping and each group's "already reported?"
context), the process's one captured environment (shared_environment: collect_env decides a report
rule, so a page export without it would differ) and write_export. So the same findings make the same
reports, byte for byte; only index.json's generated_at and status ("selection") differ.
A selection may hold findings a reviewer rejected; `transfuzz export --status confirmed` leaves them
out, and so does a selection unless the reviewer includes them on purpose: the page lists them first
(a page of its own, so it works without JavaScript) and the API leaves them out unless asked
(rejected=include), naming the ones it left out in a header.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agent.export.environment import Environment, shared_environment
from agent.export.writer import ExportIndex, Format, GroupContext, write_export
from agent.review.grouping import RootCauseGroup, group_by_root_cause
from agent.review.known import known_for_group
from db.queries.findings import FindingRecord, SignatureGroup, findings_for_export
from db.queries.queue import findings_by_ids
from db.store import Store

EXPORT_STATUSES = ("confirmed", "accepted")
# What the review page's export calls its selection in index.json's "status".
SELECTION_STATUS = "selection"


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
        groups, contexts = report_groups(session, findings_for_export(session, status))
    # Read everything first, then capture the environment: no transaction stays open meanwhile.
    env = environment if environment is not None else shared_environment()
    return write_export(
        groups, out, status=status, fmt=fmt, environment=env, check_repro=check_repro, repro_timeout_s=repro_timeout_s,
        sandbox=sandbox, contexts=contexts,
    )


def report_groups(session: Any, records: list[FindingRecord]) -> tuple[list[SignatureGroup], dict[str, GroupContext]]:
    """The reports' groups and their contexts: THE grouping (Note [Root-cause groups]) and "already reported?".

    Both ways to export go through here, `transfuzz export` and the review page's "Export selection", so the
    same findings make the same reports.
    """
    root_groups = group_by_root_cause(records)
    contexts = {group.cause.key: group_context(session, group) for group in root_groups}
    return [group.as_signature_group() for group in root_groups], contexts


@dataclass
class Selection:
    """Chosen findings split by the reviewer's rejection: rejected ones leave an export unless asked for."""

    kept: list[FindingRecord]
    rejected: list[FindingRecord]
    missing: list[int]  # chosen ids with no finding


def select_findings(store: Store, ids: list[int]) -> Selection:
    with store.session() as session:
        records = findings_by_ids(session, ids)
    found = {r.id for r in records}
    return Selection(kept=[r for r in records if r.review_status != "rejected"],
                     rejected=[r for r in records if r.review_status == "rejected"],
                     missing=sorted({i for i in ids if i not in found}))


def export_selection(
    store: Store,
    ids: list[int],
    out: Path,
    *,
    fmt: Format = "markdown",
    include_rejected: bool = False,
    environment: Environment | None = None,
) -> ExportIndex:
    """The chosen findings as `transfuzz export` writes them (same grouping, contexts, environment and reports);
    findings the reviewer rejected are left out unless ``include_rejected``. ValueError when nothing is left."""
    chosen = select_findings(store, ids)
    records = sorted([*chosen.kept, *(chosen.rejected if include_rejected else [])], key=lambda r: r.id)
    if not records:
        if chosen.rejected:
            raise ValueError("every chosen finding was rejected in review; include them on purpose or choose others")
        raise ValueError("none of the chosen findings exists")
    with store.session() as session:
        groups, contexts = report_groups(session, records)
    env = environment if environment is not None else shared_environment()
    return write_export(groups, out, status=SELECTION_STATUS, fmt=fmt, environment=env, contexts=contexts)


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
