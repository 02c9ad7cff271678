"""The schema: one table per pipeline stage, plus reviews and the LLM call cache.

Status columns are plain strings (values listed in ``db.status``) so new states need no
migration of an enum type on PostgreSQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from db.base import Base, utcnow


class Issue(Base):
    __tablename__ = "issues"
    __table_args__ = (
        UniqueConstraint("repo", "number"),
        Index("ix_issues_needs_extraction", "needs_extraction"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    repo: Mapped[str] = mapped_column(String(200))
    number: Mapped[int] = mapped_column(Integer)
    title: Mapped[str] = mapped_column(Text, default="")
    body: Mapped[str] = mapped_column(Text, default="")
    labels: Mapped[list[Any]] = mapped_column(default=list)
    state: Mapped[str] = mapped_column(String(20), default="open")
    created_at: Mapped[datetime | None]
    updated_at: Mapped[datetime | None]
    closed_at: Mapped[datetime | None]
    url: Mapped[str] = mapped_column(Text, default="")
    comments: Mapped[list[Any]] = mapped_column(default=list)
    raw: Mapped[dict[str, Any]] = mapped_column(default=dict)
    content_hash: Mapped[str] = mapped_column(String(64))
    needs_extraction: Mapped[bool] = mapped_column(Boolean, default=True)
    ingested_at: Mapped[datetime] = mapped_column(default=utcnow)
    changed_at: Mapped[datetime] = mapped_column(default=utcnow)

    patterns: Mapped[list[Pattern]] = relationship(back_populates="issue", cascade="all, delete-orphan")


class IngestCursor(Base):
    """High-water mark of an incremental GitHub sync, one per (repo, filter)."""

    __tablename__ = "ingest_cursors"

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(500), unique=True)
    repo: Mapped[str] = mapped_column(String(200))
    filters: Mapped[dict[str, Any]] = mapped_column(default=dict)
    last_updated_at: Mapped[datetime | None]
    etag: Mapped[str | None] = mapped_column(String(200))
    synced_at: Mapped[datetime] = mapped_column(default=utcnow)


class Triage(Base):
    """Is an issue a silent-bug report with a usable repro, or a known false-alarm class?"""

    __tablename__ = "triages"
    __table_args__ = (UniqueConstraint("issue_id", "extractor"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    issue_id: Mapped[int] = mapped_column(ForeignKey("issues.id", ondelete="CASCADE"), index=True)
    extractor: Mapped[str] = mapped_column(String(50))
    extractor_version: Mapped[str] = mapped_column(String(50))
    is_silent_bug: Mapped[bool] = mapped_column(Boolean)
    has_repro: Mapped[bool] = mapped_column(Boolean)
    false_alarm_class: Mapped[str | None] = mapped_column(String(50))
    confidence: Mapped[float] = mapped_column(Float, default=0.0)
    reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Pattern(Base):
    __tablename__ = "patterns"
    __table_args__ = (Index("ix_patterns_status", "status"), Index("ix_patterns_api", "api"))

    id: Mapped[int] = mapped_column(primary_key=True)
    issue_id: Mapped[int] = mapped_column(ForeignKey("issues.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str | None] = mapped_column(String(50))
    api: Mapped[str | None] = mapped_column(String(300))
    reference_mode: Mapped[str | None] = mapped_column(String(100))
    test_mode: Mapped[str | None] = mapped_column(String(100))
    trigger: Mapped[dict[str, Any]] = mapped_column(default=dict)
    oracle: Mapped[dict[str, Any]] = mapped_column(default=dict)
    formal: Mapped[str] = mapped_column(Text, default="")
    repro: Mapped[str] = mapped_column(Text, default="")
    confidence: Mapped[float] = mapped_column(Float, default=0.0)
    extractor: Mapped[str] = mapped_column(String(50))
    extractor_version: Mapped[str] = mapped_column(String(50))
    status: Mapped[str] = mapped_column(String(30), default="extracted")
    error: Mapped[str | None] = mapped_column(Text)
    source_reproduces: Mapped[bool | None] = mapped_column(Boolean)
    # The source re-check (db/queries/source_recheck.py): its outcome (db.status.SOURCE_OUTCOMES) and what
    # decided it (SOURCE_BASES); the whole record, with the repro run and the harness verdicts, is source_check.
    source_outcome: Mapped[str | None] = mapped_column(String(30))
    source_basis: Mapped[str | None] = mapped_column(String(30))
    source_check: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    issue: Mapped[Issue] = relationship(back_populates="patterns")
    candidates: Mapped[list[Candidate]] = relationship(back_populates="pattern", cascade="all, delete-orphan")


class ReproRecording(Base):
    """What a report's own repro ran, recorded in the sandbox (agent/extract/record_run.py): one per issue.

    ``recording`` is the validated recording (calls, contexts, printed lines, how it ended) and ``facts`` what
    was read from it (agent/extract/recorded.py); both are data, never run. A row is redone when the code, the
    recorder or torch changes, or when it was not run (no sandbox, no time left).
    """

    __tablename__ = "repro_recordings"

    id: Mapped[int] = mapped_column(primary_key=True)
    issue_id: Mapped[int] = mapped_column(ForeignKey("issues.id", ondelete="CASCADE"), unique=True)
    code_sha256: Mapped[str] = mapped_column(String(64), default="")
    recorder_version: Mapped[str] = mapped_column(String(20), default="")
    torch_version: Mapped[str] = mapped_column(String(50), default="")
    status: Mapped[str] = mapped_column(String(20))
    reason: Mapped[str] = mapped_column(Text, default="")
    exit_code: Mapped[int | None] = mapped_column(Integer)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    recording: Mapped[dict[str, Any]] = mapped_column(default=dict)
    facts: Mapped[dict[str, Any]] = mapped_column(default=dict)
    output_tail: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ApiSemantics(Base):
    """Context-free description of one API: what it computes, never an issue's scenario."""

    __tablename__ = "api_semantics"

    id: Mapped[int] = mapped_column(primary_key=True)
    api: Mapped[str] = mapped_column(String(300), unique=True)
    category: Mapped[str] = mapped_column(String(50), default="other")
    summary: Mapped[str] = mapped_column(Text, default="")
    parameters: Mapped[list[Any]] = mapped_column(default=list)
    dtypes: Mapped[list[Any]] = mapped_column(default=list)
    details: Mapped[dict[str, Any]] = mapped_column(default=dict)
    source: Mapped[str] = mapped_column(String(50), default="offline")
    torch_version: Mapped[str | None] = mapped_column(String(50))
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class Candidate(Base):
    __tablename__ = "candidates"
    __table_args__ = (UniqueConstraint("pattern_id", "target_api"), Index("ix_candidates_status", "status"))

    id: Mapped[int] = mapped_column(primary_key=True)
    pattern_id: Mapped[int] = mapped_column(ForeignKey("patterns.id", ondelete="CASCADE"), index=True)
    target_api: Mapped[str] = mapped_column(String(300))
    score: Mapped[float] = mapped_column(Float, default=0.0)
    rationale: Mapped[str] = mapped_column(Text, default="")
    adapted_trigger: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(30), default="proposed")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    pattern: Mapped[Pattern] = relationship(back_populates="candidates")
    harnesses: Mapped[list[Harness]] = relationship(back_populates="candidate", cascade="all, delete-orphan")


class Harness(Base):
    __tablename__ = "harnesses"
    __table_args__ = (Index("ix_harnesses_status", "status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    candidate_id: Mapped[int | None] = mapped_column(ForeignKey("candidates.id", ondelete="CASCADE"), index=True)
    spec: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(30), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    claimed_at: Mapped[datetime | None]
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    candidate: Mapped[Candidate | None] = relationship(back_populates="harnesses")
    findings: Mapped[list[Finding]] = relationship(back_populates="harness", cascade="all, delete-orphan")


class Run(Base):
    """One campaign: its configuration, counters and why it stopped."""

    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    command: Mapped[str] = mapped_column(String(50), default="fuzz")
    config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    ended_at: Mapped[datetime | None]
    heartbeat_at: Mapped[datetime | None]
    counters: Mapped[dict[str, Any]] = mapped_column(default=dict)
    exit_reason: Mapped[str | None] = mapped_column(String(100))


class Finding(Base):
    __tablename__ = "findings"
    __table_args__ = (
        Index("ix_findings_verdict", "verdict"),
        Index("ix_findings_signature", "signature"),
        Index("ix_findings_review_status_verdict", "review_status", "verdict"),  # the queue's per-status counts
        # Note [One verdict per claim] (db/queries/campaign.py): a claim of a harness yields at most one row per
        # variant, however often a result is retried or re-sent.
        UniqueConstraint("harness_id", "attempt", "variant", name="uq_findings_harness_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    harness_id: Mapped[int] = mapped_column(ForeignKey("harnesses.id", ondelete="CASCADE"), index=True)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"), index=True)
    verdict: Mapped[str] = mapped_column(String(30))
    reason: Mapped[str] = mapped_column(Text, default="")
    evidence: Mapped[dict[str, Any]] = mapped_column(default=dict)
    repro: Mapped[str] = mapped_column(Text, default="")
    signature: Mapped[str] = mapped_column(String(200), default="")
    review_status: Mapped[str] = mapped_column(String(30), default="unreviewed")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    attempt: Mapped[int | None] = mapped_column(Integer)  # the harness's claim (its `attempts`) this verdict came from
    variant: Mapped[str] = mapped_column(String(64), default="", server_default="")  # which precision variant

    harness: Mapped[Harness] = relationship(back_populates="findings")
    reviews: Mapped[list[Review]] = relationship(back_populates="finding", cascade="all, delete-orphan")


class Review(Base):
    __tablename__ = "reviews"

    id: Mapped[int] = mapped_column(primary_key=True)
    finding_id: Mapped[int] = mapped_column(ForeignKey("findings.id", ondelete="CASCADE"), index=True)
    decision: Mapped[str] = mapped_column(String(30))
    note: Mapped[str] = mapped_column(Text, default="")
    reviewer: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    finding: Mapped[Finding] = relationship(back_populates="reviews")


class LlmCall(Base):
    """Cache of LLM calls keyed by hash(prompt name + version, model, rendered prompt)."""

    __tablename__ = "llm_calls"
    __table_args__ = (Index("ix_llm_calls_prompt", "prompt_name", "prompt_version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    cache_key: Mapped[str] = mapped_column(String(64), unique=True)
    prompt_name: Mapped[str] = mapped_column(String(100))
    prompt_version: Mapped[str] = mapped_column(String(50))
    model: Mapped[str] = mapped_column(String(200))
    request: Mapped[dict[str, Any]] = mapped_column(default=dict)
    response: Mapped[dict[str, Any] | None] = mapped_column()
    attempts: Mapped[list[Any]] = mapped_column(default=list)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class InventorySnapshot(Base):
    """Marks that api_semantics holds the whole public API of one torch version."""

    __tablename__ = "inventory_snapshots"

    id: Mapped[int] = mapped_column(primary_key=True)
    torch_version: Mapped[str] = mapped_column(String(50), unique=True)
    api_count: Mapped[int] = mapped_column(Integer, default=0)
    source: Mapped[str] = mapped_column(String(50), default="offline")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ApiDescription(Base):
    """An LLM's functional description of one API, per (torch version, API, prompt version, model).

    Kept apart from ``api_semantics`` (introspection, rebuilt per torch version) so a paid
    description survives an inventory refresh and a run resumes with the APIs still missing.
    """

    __tablename__ = "api_descriptions"
    __table_args__ = (UniqueConstraint("torch_version", "api", "prompt_version", "model"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    torch_version: Mapped[str] = mapped_column(String(50))
    api: Mapped[str] = mapped_column(String(300))
    prompt_version: Mapped[str] = mapped_column(String(50))
    model: Mapped[str] = mapped_column(String(200))
    category: Mapped[str] = mapped_column(String(50), default="other")
    summary: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ApiEmbedding(Base):
    """Cached embedding vector of one API's description text, per (model, torch version, API).

    ``text_hash`` is the sha256 of the embedded text: a changed description is embedded again.
    The vector is a plain JSON float array on both databases (see Note [Vector storage] in
    agent/transfer/embeddings.py).
    """

    __tablename__ = "api_embeddings"
    __table_args__ = (UniqueConstraint("model", "torch_version", "api"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    model: Mapped[str] = mapped_column(String(200))
    torch_version: Mapped[str] = mapped_column(String(50))
    api: Mapped[str] = mapped_column(String(300))
    text_hash: Mapped[str] = mapped_column(String(64))
    dims: Mapped[int] = mapped_column(Integer)
    vector: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
