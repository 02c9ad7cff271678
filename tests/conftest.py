"""Shared fixtures: a real database on SQLite always, and on PostgreSQL when configured."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from db.engine import make_engine
from db.store import Store, open_store

PG_URL_ENV = "TRANSFUZZ_TEST_PG_URL"
# `extract` and `run` run the reports' repros in the sandbox before extracting (2 minutes by default): tests that
# want it say so (tests/agent/extract/test_recorded_runs.py); everywhere else it would only cost time.
os.environ.setdefault("TRANSFUZZ_RECORD_BUDGET", "0")
REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_ISSUES = REPO_ROOT / "examples" / "sample_issues.json"


def _db_params() -> list:
    params = [pytest.param("sqlite", id="sqlite")]
    params.append(
        pytest.param(
            "postgresql",
            id="postgresql",
            marks=[
                pytest.mark.postgres,
                pytest.mark.skipif(not os.environ.get(PG_URL_ENV), reason=f"{PG_URL_ENV} not set"),
            ],
        )
    )
    return params


@pytest.fixture
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database URL: a SQLite file, or a throw-away PostgreSQL database."""
    backend = getattr(request, "param", "sqlite")
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'transfuzz.db'}"
        return
    admin_url = os.environ[PG_URL_ENV]
    name = f"tf_test_{uuid.uuid4().hex[:12]}"
    admin = make_engine(admin_url).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    base, _, _ = admin_url.rpartition("/")
    try:
        yield f"{base}/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """An open Store at the newest schema on a fresh database."""
    s = open_store(db_url)
    try:
        yield s
    finally:
        s.close()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # Every test that uses a database runs on SQLite and on PostgreSQL.
    if "db_url" in metafunc.fixturenames:
        metafunc.parametrize("db_url", _db_params(), indirect=True)
