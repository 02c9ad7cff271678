"""Rows of ``repro_recordings``: what each report's own repro ran (one row per issue, replaced when redone).

The recording and the facts are JSON the caller has already validated; this module stores and reads them and
decides when a row is stale. It knows nothing of how they were made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from db import models
from db.base import utcnow

# statuses after which running again cannot do better on the same code, recorder and torch
FINAL_STATUSES = frozenset({"ok", "raised", "exit", "timeout", "killed", "crashed", "invalid"})


@dataclass(frozen=True)
class RecordingValues:
    code_sha256: str
    recorder_version: str
    torch_version: str
    status: str
    reason: str
    exit_code: int | None = None
    seconds: float = 0.0
    recording: dict[str, Any] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)
    output_tail: str = ""


@dataclass(frozen=True)
class StoredRecording:
    issue_id: int
    values: RecordingValues


def _values(row: models.ReproRecording) -> RecordingValues:
    return RecordingValues(code_sha256=row.code_sha256, recorder_version=row.recorder_version,
                           torch_version=row.torch_version, status=row.status, reason=row.reason,
                           exit_code=row.exit_code, seconds=row.seconds, recording=dict(row.recording or {}),
                           facts=dict(row.facts or {}), output_tail=row.output_tail)


def get_recording(session: Session, issue_id: int) -> StoredRecording | None:
    row = session.scalar(select(models.ReproRecording).where(models.ReproRecording.issue_id == issue_id))
    return None if row is None else StoredRecording(issue_id, _values(row))


def is_current(stored: StoredRecording | None, *, code_sha256: str, recorder_version: str, torch_version: str) -> bool:
    """Whether `stored` answers for this code on this recorder and torch (a "not_run" row never does)."""
    if stored is None:
        return False
    v = stored.values
    return (v.status in FINAL_STATUSES and v.code_sha256 == code_sha256 and v.recorder_version == recorder_version
            and v.torch_version == torch_version)


def save_recording(session: Session, issue_id: int, values: RecordingValues) -> None:
    """Insert or replace the issue's recording (in the caller's transaction)."""
    row = session.scalar(select(models.ReproRecording).where(models.ReproRecording.issue_id == issue_id))
    if row is None:
        row = models.ReproRecording(issue_id=issue_id)
        session.add(row)
    for key, value in values.__dict__.items():
        setattr(row, key, value)
    row.created_at = utcnow()  # when this recording was made
    session.flush()
