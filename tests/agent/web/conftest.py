"""The review server most page and API tests share: the populated rows (tests/agent/web/rows.py) on the `store`
fixture's database, served on loopback. A test module that needs other rows or another server defines its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from db.store import Store
from tests.agent.web.rows import ReviewRows, populate
from tests.agent.web.server import RunningServer, review_server


@pytest.fixture
def rows(store: Store) -> ReviewRows:
    with store.session() as session:
        return populate(session)


@pytest.fixture
def server(store: Store, rows: ReviewRows) -> Iterator[RunningServer]:
    with review_server(store) as running:
        yield running
