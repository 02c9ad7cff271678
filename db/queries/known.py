"""Look-ups for "already reported?": stored issues (open and closed) whose title or body names an API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from db.models import Issue

BODY_CHARS = 20_000  # enough for a report's text; bodies beyond it are pasted logs


@dataclass
class IssueMention:
    repo: str
    number: int
    title: str
    body: str
    state: str
    labels: list[str]


def _like(word: str) -> str:
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def issues_mentioning(session: Session, words: Sequence[str], *, limit: int = 500) -> list[IssueMention]:
    """Issues whose title or body contains any of ``words`` (case-insensitive), newest number first."""
    chosen = [w for w in dict.fromkeys(words) if w]
    if not chosen:
        return []
    conditions = [column.ilike(_like(w), escape="\\") for w in chosen for column in (Issue.title, Issue.body)]
    query = select(Issue.repo, Issue.number, Issue.title, Issue.body, Issue.state, Issue.labels).where(
        or_(*conditions)).order_by(Issue.number.desc()).limit(limit)
    return [
        IssueMention(repo=repo, number=number, title=title or "", body=(body or "")[:BODY_CHARS], state=state or "",
                     labels=[str(label.get("name", label)) if isinstance(label, dict) else str(label)
                             for label in (labels or [])])
        for repo, number, title, body, state, labels in session.execute(query).all()
    ]
