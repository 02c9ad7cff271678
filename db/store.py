"""Open a database for the pipeline: engine, schema at head, session factory."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from db.engine import make_engine, masked, resolve_db_url, session_factory, session_scope
from db.schema import ensure_current


@dataclass
class Store:
    url: str
    engine: Engine
    sessions: sessionmaker[Session]

    def session(self):  # type: ignore[no-untyped-def]
        """Context manager: one committed-or-rolled-back transaction."""
        return session_scope(self.sessions)

    @property
    def masked_url(self) -> str:
        return masked(self.url)

    def close(self) -> None:
        self.engine.dispose()


def open_store(url: str | None = None, *, upgrade: bool = True) -> Store:
    resolved = resolve_db_url(url)
    if resolved.startswith("sqlite:///") and not resolved.startswith("sqlite:///:memory:"):
        from pathlib import Path

        Path(resolved[len("sqlite:///") :]).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
    engine = make_engine(resolved)
    if upgrade:
        ensure_current(engine)
    return Store(url=resolved, engine=engine, sessions=session_factory(engine))
