"""The LLM call cache on the ``llm_calls`` table: a re-run costs nothing and is reproducible."""

from __future__ import annotations

from typing import Any

from agent.llm.backend import CallRecord


class DbResponseCache:
    """Each lookup and each write is its own short transaction, so a crash loses no paid call
    and no stage transaction is ever held open across a model call (SQLite allows one writer)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.hits = 0

    def get(self, key: str) -> dict[str, Any] | None:
        from db.queries.extraction import cached_llm_response

        with self.store.session() as session:
            hit = cached_llm_response(session, key)
        if hit is not None:
            self.hits += 1
        return hit

    def put(self, record: CallRecord) -> None:
        """Thread-safe: two workers asking the same question race to insert; the loser updates."""
        from sqlalchemy.exc import IntegrityError

        from db.queries.extraction import record_llm_call

        values = record.model_dump(mode="json")
        try:
            with self.store.session() as session:
                record_llm_call(session, values)
        except IntegrityError:
            with self.store.session() as session:
                record_llm_call(session, values)
