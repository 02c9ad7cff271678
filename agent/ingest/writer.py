"""Write normalised issues to the database in batches, one transaction per batch.

Note [A bad row does not sink its batch]
Records are checked before they are written (Note [Untrusted records]), but should the
database still refuse a batch for its data (a value out of range, text it cannot store), the
batch is written again one row per transaction: every row it accepts is stored, and each row it
refuses is skipped with its position and the database's reason. Connection failures are not
about a row and still stop the run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError, StatementError
from sqlalchemy.orm import Session

from agent.ingest.summary import IngestSummary, Problem
from agent.ingest.untrusted import quoted
from db.queries.issues import IssueRow, UpsertCounts, upsert_issues
from db.store import Store

BATCH_SIZE = 500
MAX_REASON_CHARS = 300


def _upsert(store: Store, rows: list[IssueRow], also: Callable[[Session], Any] | None) -> UpsertCounts:
    """One transaction. Another process may insert the same (repo, number) between our SELECT
    and INSERT; the unique constraint then rejects it, and a second attempt sees that row as existing."""
    for attempt in (1, 2):
        try:
            with store.session() as session:
                counts = upsert_issues(session, rows)
                if also is not None:
                    also(session)
            return counts
        except IntegrityError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _refused_for_its_data(exc: Exception) -> bool:
    if isinstance(exc, OperationalError | InterfaceError):
        return False  # the connection, not the data
    return isinstance(exc, StatementError | ValueError | OverflowError)


def _reason(exc: Exception) -> str:
    cause = getattr(exc, "orig", None) or exc
    first_line = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
    return f"the database refused it: {quoted(first_line, MAX_REASON_CHARS)}"


def write_batch(
    store: Store,
    rows: list[IssueRow],
    summary: IngestSummary,
    also: Callable[[Session], Any] | None = None,
    positions: Sequence[str] | None = None,
) -> list[Problem]:
    """Upsert ``rows`` (and run ``also`` in the same transaction); count into ``summary``.

    Returns the rows refused by the database, as problems already added to ``summary``;
    see Note [A bad row does not sink its batch]. ``positions`` name the rows in those problems.
    """
    problems: list[Problem] = []
    try:
        counts = _upsert(store, rows, also)
        stored = rows
    except Exception as exc:
        if not _refused_for_its_data(exc):
            raise
        counts, stored = UpsertCounts(), []
        for at, row in enumerate(rows):
            try:
                counts.add(_upsert(store, [row], None))
                stored.append(row)
            except Exception as row_exc:
                if not _refused_for_its_data(row_exc):
                    raise
                position = positions[at] if positions is not None else f"{row.repo} issue #{row.number}"
                problems.append(summary.add_problem(position, _reason(row_exc)))
        if also is not None:
            with store.session() as session:
                also(session)
    summary.new += counts.new
    summary.updated += counts.updated
    summary.unchanged += counts.unchanged
    for row in stored:
        summary.add_repo(row.repo)
    return problems


class BatchWriter:
    """Collects rows with their positions in the source and writes every ``batch_size`` of them."""

    def __init__(
        self,
        store: Store,
        summary: IngestSummary,
        batch_size: int = BATCH_SIZE,
        on_problem: Callable[[Problem], None] | None = None,
    ) -> None:
        self.store = store
        self.summary = summary
        self.batch_size = batch_size
        self.on_problem = on_problem
        self.pending: list[IssueRow] = []
        self.positions: list[str] = []

    def add(self, row: IssueRow, position: str | None = None) -> None:
        self.pending.append(row)
        self.positions.append(position or f"{row.repo} issue #{row.number}")
        if len(self.pending) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            rows, positions = self.pending, self.positions
            self.pending, self.positions = [], []
            for problem in write_batch(self.store, rows, self.summary, positions=positions):
                if self.on_problem is not None:
                    self.on_problem(problem)
