"""Queries of the transfer and harness stages: patterns to transfer, candidates, harnesses."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from db import models
from db.base import utcnow


def all_semantics(session: Session) -> list[models.ApiSemantics]:
    return list(session.scalars(select(models.ApiSemantics).order_by(models.ApiSemantics.api)))


def inventory_snapshot(session: Session, torch_version: str) -> models.InventorySnapshot | None:
    return session.scalar(select(models.InventorySnapshot).where(models.InventorySnapshot.torch_version == torch_version))


def record_inventory_snapshot(session: Session, torch_version: str, api_count: int, source: str) -> None:
    snapshot = inventory_snapshot(session, torch_version)
    if snapshot is None:
        session.add(models.InventorySnapshot(torch_version=torch_version, api_count=api_count, source=source))
    else:
        snapshot.api_count, snapshot.source, snapshot.created_at = api_count, source, utcnow()


def upsert_semantics_rows(session: Session, rows: Iterable[dict[str, Any]]) -> int:
    """Insert or replace api_semantics rows by api; returns how many were written.

    An offline row never replaces a model-written one (source other than ``offline``): it only
    adds the facts the model row lacks (inventory details such as ``in_opinfo``)."""
    rows = list(rows)
    existing = {s.api: s for s in session.scalars(
        select(models.ApiSemantics).where(models.ApiSemantics.api.in_([r["api"] for r in rows]))
    )} if rows else {}
    for row in rows:
        current = existing.get(row["api"])
        if current is None:
            session.add(models.ApiSemantics(**row))
        elif row.get("source") == "offline" and current.source != "offline":
            current.details = {**(row.get("details") or {}), **(current.details or {})}
        else:
            for key, value in row.items():
                setattr(current, key, value)
    return len(rows)


def delete_semantics(session: Session, apis: Iterable[str]) -> int:
    """Remove the api_semantics rows of these APIs; returns how many there were."""
    names = list(apis)
    rows = list(session.scalars(select(models.ApiSemantics).where(models.ApiSemantics.api.in_(names)))) if names else []
    for row in rows:
        session.delete(row)
    return len(rows)


def patterns_without_candidates(session: Session, *, limit: int | None = None) -> list[models.Pattern]:
    """Extracted patterns (with an API) that transfer has not looked at yet."""
    has_candidates = exists().where(models.Candidate.pattern_id == models.Pattern.id)
    stmt = (
        select(models.Pattern)
        .where(models.Pattern.status == "extracted", models.Pattern.api.is_not(None), ~has_candidates)
        .order_by(models.Pattern.id)
    )
    if limit:
        stmt = stmt.limit(limit)
    return list(session.scalars(stmt))


def add_candidates(session: Session, pattern_id: int, candidates: Sequence[dict[str, Any]]) -> list[models.Candidate]:
    rows = [models.Candidate(pattern_id=pattern_id, **c) for c in candidates]
    session.add_all(rows)
    session.flush()
    return rows


def mark_pattern(session: Session, pattern_id: int, **fields: Any) -> None:
    pattern = session.get(models.Pattern, pattern_id)
    if pattern is not None:
        for key, value in fields.items():
            setattr(pattern, key, value)


def candidates_without_harness(session: Session) -> list[models.Candidate]:
    has_harness = exists().where(models.Harness.candidate_id == models.Candidate.id)
    stmt = (
        select(models.Candidate)
        .where(models.Candidate.status.in_(("proposed", "source")), ~has_harness)
        .order_by(models.Candidate.pattern_id, models.Candidate.score.desc())
    )
    return list(session.scalars(stmt))


def add_harness(session: Session, candidate_id: int | None, spec: dict[str, Any]) -> models.Harness:
    harness = models.Harness(candidate_id=candidate_id, spec=spec, status="pending")
    session.add(harness)
    session.flush()
    return harness


def set_candidate_status(session: Session, candidate_id: int, status: str, rationale_note: str | None = None) -> None:
    candidate = session.get(models.Candidate, candidate_id)
    if candidate is not None:
        candidate.status = status
        if rationale_note:
            candidate.rationale = f"{candidate.rationale}; {rationale_note}" if candidate.rationale else rationale_note
