"""Ingest an issue dump file: REST JSON array, JSON Lines, or `gh issue list --json` output."""

from __future__ import annotations

import time
from pathlib import Path

from agent.ingest.records import DEFAULT_LIMITS, BadRecord, PullRequest, RecordLimits, normalise
from agent.ingest.stream import DEFAULT_ENCODING, iter_dump
from agent.ingest.summary import IngestEvents, IngestSummary, Problem
from agent.ingest.writer import BATCH_SIZE, BatchWriter
from db.store import Store


def ingest_file(
    store: Store,
    path: Path | str,
    *,
    repo: str | None = None,
    events: IngestEvents | None = None,
    batch_size: int = BATCH_SIZE,
    limit: int | None = None,
    limits: RecordLimits = DEFAULT_LIMITS,
    encoding: str = DEFAULT_ENCODING,
) -> IngestSummary:
    """Stream ``path`` into the issues table; bad records are reported and skipped, one by one.

    ``limit`` stops after that many issues (pull requests and bad records not counted);
    ``limits`` caps each record's texts; ``encoding`` is the file's codec.

    Raises FileNotFoundError / DumpFormatError / DumpEncodingError (stream.py) before anything
    is written when the file is missing, is not a dump at all, or is not ``encoding`` text.
    """
    events = events or IngestEvents()
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    started = time.perf_counter()
    summary = IngestSummary(source=str(path))
    total_bytes = path.stat().st_size

    def tell(problem: Problem) -> None:
        events.notify(f"skipped {problem.position}: {problem.reason}")

    writer = BatchWriter(store, summary, batch_size, on_problem=tell)
    accepted = 0
    for record in iter_dump(path, on_bytes=lambda done: events.progress(done, total_bytes), encoding=encoding):
        if limit is not None and accepted >= limit:
            summary.limit_reached = True
            break
        if record.error is not None:
            tell(summary.add_problem(record.position, record.error))
            continue
        position = record.position
        try:
            row = normalise(record.value, repo, limits)
        except PullRequest:
            summary.pull_requests += 1
            continue
        except BadRecord as exc:
            tell(summary.add_problem(record.position, str(exc)))
            continue
        finally:
            del record  # a huge source value is released before the next record is read
        writer.add(row, position)
        accepted += 1
    writer.flush()
    summary.elapsed_s = round(time.perf_counter() - started, 3)
    return summary
