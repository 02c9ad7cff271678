"""Ingest issues into the database from GitHub (``github:OWNER/REPO``) or from a dump file."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from agent.ingest.file_source import ingest_file
from agent.ingest.github_api import GitHubError
from agent.ingest.github_sync import ingest_github
from agent.ingest.records import DEFAULT_LIMITS, RecordLimits
from agent.ingest.stream import DEFAULT_ENCODING, DumpEncodingError, DumpFormatError
from agent.ingest.summary import IngestEvents, IngestSummary, Problem
from db.store import Store

GITHUB_PREFIX = "github:"

__all__ = [
    "DumpEncodingError",
    "DumpFormatError",
    "GitHubError",
    "IngestEvents",
    "IngestSummary",
    "Problem",
    "RecordLimits",
    "ingest_file",
    "ingest_github",
    "ingest_source",
]


def ingest_source(
    store: Store,
    source: str,
    *,
    token: str | None = None,
    api_url: str | None = None,
    labels: list[str] | None = None,
    state: str = "all",
    since: datetime | None = None,
    limit: int | None = None,
    comments: bool = True,
    events: IngestEvents | None = None,
    limits: RecordLimits = DEFAULT_LIMITS,
    encoding: str = DEFAULT_ENCODING,
) -> IngestSummary:
    """The pipeline's entry: ``github:OWNER/REPO`` syncs from GitHub, anything else is a dump path.

    ``limit`` caps the issues taken from either source; ``labels``/``state``/``since``/``comments`` apply
    to GitHub only, ``limits`` (text caps) and ``encoding`` to files only (GitHub caps bodies at
    65,536 characters itself). Raises ValueError (bad OWNER/REPO), FileNotFoundError,
    DumpFormatError (DumpEncodingError) or GitHubError.
    """
    if source.startswith(GITHUB_PREFIX):
        return ingest_github(
            store,
            source[len(GITHUB_PREFIX) :],
            labels=labels,
            state=state,
            since=since,
            limit=limit,
            comments=comments,
            api_url=api_url,
            token=token,
            events=events,
        )
    return ingest_file(store, Path(source), events=events, limit=limit, limits=limits, encoding=encoding)
