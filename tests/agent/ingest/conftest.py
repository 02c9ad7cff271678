"""Fixtures for ingest tests: the sample dump and a loopback GitHub serving it."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from db.store import Store, open_store
from tests.agent.ingest.github_server import GitHubState, LoopbackGitHub
from tests.conftest import SAMPLE_ISSUES

SAMPLE_REPO = "transfuzz-samples/pytorch-issues"


def sample_records() -> list[dict[str, Any]]:
    return json.loads(SAMPLE_ISSUES.read_text(encoding="utf-8"))


def comments_for(issue: dict[str, Any]) -> list[dict[str, Any]]:
    """Deterministic comments, as many as the issue's ``comments`` count says."""
    created = datetime.fromisoformat(issue["created_at"].replace("Z", "+00:00"))
    return [
        {
            "id": issue["number"] * 1000 + k,
            "user": {"login": f"maintainer{k}"},
            "body": f"Comment {k} on #{issue['number']}: looked into it.",
            "created_at": (created + timedelta(hours=k + 1)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        for k in range(issue["comments"])
    ]


def github_state(records: list[dict[str, Any]] | None = None) -> GitHubState:
    records = copy.deepcopy(records if records is not None else sample_records())
    state = GitHubState(issues={SAMPLE_REPO: records})
    for issue in records:
        state.comments[(SAMPLE_REPO, issue["number"])] = comments_for(issue)
    return state


@pytest.fixture
def github() -> Iterator[LoopbackGitHub]:
    """A loopback GitHub (under /api/v3, as GitHub Enterprise) serving the 30 sample issues."""
    with LoopbackGitHub(github_state()) as server:
        yield server


@pytest.fixture
def sqlite_store(tmp_path) -> Iterator[Store]:  # type: ignore[no-untyped-def]
    """For tests of HTTP behaviour only: the database plays no part, so one backend is enough."""
    s = open_store(f"sqlite:///{tmp_path / 'http.db'}")
    try:
        yield s
    finally:
        s.close()
