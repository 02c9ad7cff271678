"""Ingest an issue dump file: REST JSON array, JSON Lines, or `gh issue list --json` output."""

from __future__ import annotations

import time
from pathlib import Path

from agent.ingest.records import BadRecord, PullRequest, normalise
from agent.ingest.stream import iter_dump
from agent.ingest.summary import IngestEvents, IngestSummary
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
) -> IngestSummary:
    """Stream ``path`` into the issues table; bad records are reported and skipped.

    ``limit`` stops after that many issues (pull requests and bad records not counted).

    Raises FileNotFoundError / DumpFormatError (stream.py) before anything is written when
    the file is missing or is not a dump at all.
    """
    events = events or IngestEvents()
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    started = time.perf_counter()
    summary = IngestSummary(source=str(path))
    total_bytes = path.stat().st_size
    writer = BatchWriter(store, summary, batch_size)
    accepted = 0
    for record in iter_dump(path, on_bytes=lambda done: events.progress(done, total_bytes)):
        if limit is not None and accepted >= limit:
            summary.limit_reached = True
            break
        if record.error is not None:
            problem = summary.add_problem(record.position, record.error)
            events.notify(f"skipped {problem.position}: {problem.reason}")
            continue
        try:
            row = normalise(record.value, repo)
        except PullRequest:
            summary.pull_requests += 1
            continue
        except BadRecord as exc:
            problem = summary.add_problem(record.position, str(exc))
            events.notify(f"skipped {problem.position}: {problem.reason}")
            continue
        writer.add(row)
        accepted += 1
    writer.flush()
    summary.elapsed_s = round(time.perf_counter() - started, 3)
    return summary
