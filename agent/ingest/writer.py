"""Write normalised issues to the database in batches, one transaction per batch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from agent.ingest.summary import IngestSummary
from db.queries.issues import IssueRow, upsert_issues
from db.store import Store

BATCH_SIZE = 500


def write_batch(
    store: Store,
    rows: list[IssueRow],
    summary: IngestSummary,
    also: Callable[[Session], Any] | None = None,
) -> None:
    """Upsert ``rows`` (and run ``also`` in the same transaction); count into ``summary``.

    Another process may insert the same (repo, number) between our SELECT and INSERT; the
    unique constraint then rejects the batch, and a second attempt sees that row as existing.
    """
    for attempt in (1, 2):
        try:
            with store.session() as session:
                counts = upsert_issues(session, rows)
                if also is not None:
                    also(session)
        except IntegrityError:
            if attempt == 2:
                raise
            continue
        break
    summary.new += counts.new
    summary.updated += counts.updated
    summary.unchanged += counts.unchanged
    for row in rows:
        summary.add_repo(row.repo)


class BatchWriter:
    """Collects rows and writes every ``batch_size`` of them."""

    def __init__(self, store: Store, summary: IngestSummary, batch_size: int = BATCH_SIZE) -> None:
        self.store = store
        self.summary = summary
        self.batch_size = batch_size
        self.pending: list[IssueRow] = []

    def add(self, row: IssueRow) -> None:
        self.pending.append(row)
        if len(self.pending) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            rows, self.pending = self.pending, []
            write_batch(self.store, rows, self.summary)
