"""Batch writes: a row the database refuses is skipped with its position; the rest of its batch is stored."""

from __future__ import annotations

from sqlalchemy import select

from agent.ingest.summary import IngestSummary
from agent.ingest.writer import BatchWriter
from db.models import Issue
from db.queries.issues import IssueRow
from db.store import Store


def _row(number: int) -> IssueRow:
    return IssueRow(repo="a/b", number=number, title=f"t{number}", body="", labels=[], state="open",
                    created_at=None, updated_at=None, closed_at=None, url="", comments=[])


def test_refused_row_is_reported_and_its_batch_stored(store: Store) -> None:
    """10**19 fits neither SQLite's INTEGER nor PostgreSQL's: both refuse the row, not the run."""
    summary = IngestSummary(source="test")
    told = []
    writer = BatchWriter(store, summary, batch_size=4, on_problem=told.append)
    for number, position in [(1, "record 1"), (10**19, "record 2"), (3, "record 3"), (4, "record 4"), (5, "record 5")]:
        writer.add(_row(number), position)
    writer.flush()
    assert (summary.new, summary.bad_records) == (4, 1)
    assert [p.position for p in told] == ["record 2"] and told[0].reason.startswith("the database refused it: ")
    with store.session() as session:
        assert sorted(session.scalars(select(Issue.number))) == [1, 3, 4, 5]


def test_clean_batch_is_one_write(store: Store) -> None:
    summary = IngestSummary(source="test")
    writer = BatchWriter(store, summary, batch_size=10)
    for number in range(1, 4):
        writer.add(_row(number))
    writer.flush()
    assert (summary.new, summary.bad_records, summary.repos) == (3, 0, ["a/b"])
