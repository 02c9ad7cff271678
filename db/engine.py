"""Engine creation, URL resolution and the connectivity check with a masked message."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

DEFAULT_DB_URL = "sqlite:///transfuzz.db"
DB_URL_ENV = "TRANSFUZZ_DB_URL"


class DatabaseUnavailable(RuntimeError):
    """The database URL is malformed or nothing answers there. The message masks the password."""


def masked(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return url.split("://", 1)[0] + "://***" if "://" in url else "***"


URL_FORMS = ("sqlite:///relative/path.db, sqlite:////absolute/path.db "
             "or postgresql+psycopg://USER[:PASSWORD]@HOST[:PORT]/DBNAME")


def sqlite_file(url: str) -> str | None:
    """The file a SQLite URL names (None for other databases, in-memory SQLite, or a URL that does not parse)."""
    try:
        parsed = make_url(resolve_db_url(url))
    except ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return parsed.database


def resolve_db_url(explicit: str | None = None) -> str:
    """Explicit URL (flag/settings) > TRANSFUZZ_DB_URL > the embedded SQLite default."""
    url = explicit or os.environ.get(DB_URL_ENV) or DEFAULT_DB_URL
    # plain postgresql:// and postgres:// mean psycopg 3, which is what we ship
    if url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url[len("postgres://") :]
    elif url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def make_engine(url: str) -> Engine:
    """Create an engine and prove that the database answers; raise DatabaseUnavailable if not."""
    url = resolve_db_url(url)
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise DatabaseUnavailable(f"invalid database URL {masked(url)}: {exc}; expected {URL_FORMS}") from None
    kwargs: dict = {"future": True}
    if parsed.get_backend_name() == "postgresql":
        kwargs.update(pool_pre_ping=True, connect_args={"connect_timeout": 5})
    try:
        engine = create_engine(url, **kwargs)
    except Exception as exc:  # missing driver, bad options
        raise DatabaseUnavailable(f"cannot use database {masked(url)}: {exc}; expected {URL_FORMS}") from None
    if parsed.get_backend_name() == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        engine.dispose()
        raise DatabaseUnavailable(f"cannot reach database {masked(url)}: {reason}") from None
    return engine


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    """A transaction: committed on success, rolled back on any exception."""
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()
