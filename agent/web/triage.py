"""The queue page's view: findings grouped by root cause (agent/review/grouping.py, the grouping `review list` and
`export` use), most severe first, under a triage summary of verdict × review status.

Note [Queue groups]
Grouping needs the findings together, so the page groups one page of the keyset queue (up to GROUPED_PAGE
findings; the next page continues the same order). Groups are shown most severe verdict first (confirmed,
then suspicious, ...), newest first within a verdict, so a maintainer meets the bugs before the passes. A
group shows its representative finding (the oldest with the group's verdict) and folds the rest under it
with a count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from agent.review.grouping import group_by_root_cause
from agent.review.views import FindingSummary
from db.models import Finding, Run
from db.queries.findings import FindingRecord
from db.queries.queue import QueueFilter, queue_page
from db.status import REVIEW_STATUSES, VERDICTS

GROUPED_PAGE = 200
# Most severe first: the order of the groups on the page and of the summary's rows.
SEVERITY = ("confirmed", "suspicious", "crash", "hang", "flaky", "error", "inconclusive", "not_applicable", "passed")
# What the queue shows when the URL names no filter: what needs a decision (the CLI's `review list` default).
DEFAULT_STATUSES = ("unreviewed",)
DEFAULT_VERDICTS = ("confirmed", "suspicious")


def severity(verdict: str) -> int:
    return SEVERITY.index(verdict) if verdict in SEVERITY else len(SEVERITY)


@dataclass
class QueueGroup:
    label: str  # "g12", the grouping's name for it
    cause: str  # one line: symptom, where it comes from, members
    verdict: str  # the most severe verdict among the members
    lead: FindingSummary
    folded: list[FindingSummary] = field(default_factory=list)
    has_cause: bool = True  # False for a finding that did not fail: no group label shown (as `review list`)

    @property
    def size(self) -> int:
        return 1 + len(self.folded)


@dataclass
class RunNote:
    id: int
    command: str
    started_at: datetime
    ended_at: datetime | None


@dataclass
class GroupedQueue:
    groups: list[QueueGroup]
    findings: int
    next_cursor: str | None
    counts: dict[str, int]  # review status -> findings under every other filter (the tabs)
    summary: dict[str, dict[str, int]]  # verdict -> review status -> findings, under the campaign filter only
    summary_scope: str  # "campaign 3" or "all campaigns"
    runs: list[RunNote]  # the campaigns the shown findings came from, newest first


def group_findings(records: list[FindingRecord]) -> list[QueueGroup]:
    """Root-cause groups of `records`, most severe first, newest first within a verdict (Note [Queue groups])."""
    groups = []
    for group in group_by_root_cause(records):
        verdict = min((f.verdict for f in group.findings), key=severity)
        lead = next(f for f in group.findings if f.verdict == verdict)
        folded = [FindingSummary.of(f) for f in group.findings if f.id != lead.id]
        groups.append(QueueGroup(label=group.label, cause=group.describe(), verdict=verdict,
                                 lead=FindingSummary.of(lead), folded=folded, has_cause=group.has_cause))
    groups.sort(key=lambda g: (severity(g.verdict), -max([g.lead.id, *(f.id for f in g.folded)])))
    return groups


def verdict_status_counts(session: Session, run_id: int | None) -> dict[str, dict[str, int]]:
    """verdict -> review status -> findings (only verdicts that occur), of one campaign or of all."""
    query = select(Finding.verdict, Finding.review_status, func.count()).group_by(Finding.verdict, Finding.review_status)
    if run_id is not None:
        query = query.where(Finding.run_id == run_id)
    table: dict[str, dict[str, int]] = {}
    for verdict, status, count in session.execute(query).all():
        table.setdefault(verdict, {s: 0 for s in REVIEW_STATUSES})[status] = int(count)
    return {v: table[v] for v in sorted(table, key=severity)}


def _runs(session: Session, run_ids: set[int]) -> list[RunNote]:
    if not run_ids:
        return []
    rows = session.scalars(select(Run).where(Run.id.in_(run_ids)).order_by(Run.id.desc())).all()
    return [RunNote(id=r.id, command=r.command, started_at=r.started_at, ended_at=r.ended_at) for r in rows]


def grouped_queue(session: Session, flt: QueueFilter, *, sort: str, cursor: str | None) -> GroupedQueue:
    page = queue_page(session, flt, sort=sort, cursor=cursor, limit=GROUPED_PAGE)
    groups = group_findings(page.findings)
    return GroupedQueue(
        groups=groups,
        findings=len(page.findings),
        next_cursor=page.next_cursor,
        counts=page.counts,
        summary=verdict_status_counts(session, flt.run_id),
        summary_scope=f"campaign {flt.run_id}" if flt.run_id is not None else "all campaigns",
        runs=_runs(session, {f.run_id for f in page.findings if f.run_id is not None}),
    )


assert set(SEVERITY) >= set(VERDICTS), "a verdict without a place in the queue's order"
