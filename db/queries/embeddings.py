"""Queries of the functionality matcher: cached API descriptions and embedding vectors."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from db import models


@dataclass(frozen=True)
class CachedVector:
    text_hash: str
    vector: list[float]


def descriptions(session: Session, torch_version: str, prompt_version: str, model: str) -> dict[str, models.ApiDescription]:
    """The stored descriptions of one (torch version, prompt version, model), by API."""
    stmt = select(models.ApiDescription).where(
        models.ApiDescription.torch_version == torch_version,
        models.ApiDescription.prompt_version == prompt_version,
        models.ApiDescription.model == model,
    )
    return {d.api: d for d in session.scalars(stmt)}


def add_descriptions(session: Session, torch_version: str, prompt_version: str, model: str,
                     rows: Iterable[dict[str, Any]]) -> int:
    """Store descriptions ({api, category, summary}); an API already described is replaced."""
    rows = list(rows)
    if not rows:
        return 0
    existing = descriptions(session, torch_version, prompt_version, model)
    for row in rows:
        current = existing.get(row["api"])
        if current is None:
            session.add(models.ApiDescription(torch_version=torch_version, prompt_version=prompt_version,
                                              model=model, **row))
        else:
            current.category, current.summary = row["category"], row["summary"]
    return len(rows)


def cached_vectors(session: Session, model: str, torch_version: str, apis: Sequence[str] | None = None) -> dict[str, CachedVector]:
    stmt = select(models.ApiEmbedding).where(models.ApiEmbedding.model == model,
                                             models.ApiEmbedding.torch_version == torch_version)
    rows = session.scalars(stmt)
    wanted = set(apis) if apis is not None else None
    return {r.api: CachedVector(r.text_hash, list(r.vector)) for r in rows if wanted is None or r.api in wanted}


def store_vectors(session: Session, model: str, torch_version: str, rows: Iterable[tuple[str, str, list[float]]]) -> int:
    """Insert or replace (api, text_hash, vector) rows of one (model, torch version)."""
    rows = list(rows)
    if not rows:
        return 0
    existing = {e.api: e for e in session.scalars(select(models.ApiEmbedding).where(
        models.ApiEmbedding.model == model, models.ApiEmbedding.torch_version == torch_version,
        models.ApiEmbedding.api.in_([api for api, _, _ in rows])))}
    for api, text_hash, vector in rows:
        current = existing.get(api)
        if current is None:
            session.add(models.ApiEmbedding(model=model, torch_version=torch_version, api=api, text_hash=text_hash,
                                            dims=len(vector), vector=vector))
        else:
            current.text_hash, current.vector, current.dims = text_hash, vector, len(vector)
    return len(rows)


def pgvector_available(session: Session) -> bool:
    """Whether the server could host pgvector (PostgreSQL with the ``vector`` extension available)."""
    if session.get_bind().dialect.name != "postgresql":
        return False
    found = session.execute(text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).first()
    return found is not None
