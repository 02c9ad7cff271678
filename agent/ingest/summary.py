"""What an ingest run reports (counts, problems) and how it tells the caller about progress."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

MAX_PROBLEMS_KEPT = 100


class Problem(BaseModel):
    """A record that was skipped: where it is and why."""

    position: str
    reason: str


class IngestSummary(BaseModel):
    """Counts of one ingest run; ``problems`` keeps the first MAX_PROBLEMS_KEPT bad records."""

    source: str
    repos: list[str] = Field(default_factory=list)
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    pull_requests: int = 0
    bad_records: int = 0
    problems: list[Problem] = Field(default_factory=list)
    # GitHub only
    not_modified: bool = False
    since: str | None = None
    cursor_key: str | None = None
    requests: int = 0
    comments_fetched: int = 0
    rate_limit_waits: int = 0
    limit_reached: bool = False
    elapsed_s: float = 0.0

    @property
    def issues(self) -> int:
        return self.new + self.updated + self.unchanged

    def add_problem(self, position: str, reason: str) -> Problem:
        self.bad_records += 1
        problem = Problem(position=position, reason=reason)
        if len(self.problems) < MAX_PROBLEMS_KEPT:
            self.problems.append(problem)
        return problem

    def add_repo(self, repo: str) -> None:
        if repo not in self.repos:
            self.repos.append(repo)

    def text(self) -> str:
        """One human line, e.g. for the CLI."""
        parts = [
            f"{self.new} new",
            f"{self.updated} updated",
            f"{self.unchanged} unchanged",
            f"{self.pull_requests} pull requests skipped",
            f"{self.bad_records} bad records",
        ]
        line = f"{self.source}: " + ", ".join(parts) + f" in {self.elapsed_s:.1f}s"
        if self.not_modified:
            line += " (not modified since the last sync)"
        if self.limit_reached:
            line += " (stopped at --limit)"
        return line


def _ignore_message(_message: str) -> None:
    return None


def _ignore_progress(_done: int, _total: int | None) -> None:
    return None


@dataclass
class IngestEvents:
    """Callbacks: ``notify`` for messages users must see (waits, bad records), ``progress`` for bars.

    ``progress(done, total)``: bytes read of a file, or issues processed of a GitHub listing
    (``total`` None when unknown).
    """

    notify: Callable[[str], None] = field(default=_ignore_message)
    progress: Callable[[int, int | None], None] = field(default=_ignore_progress)
