"""The versioned `--json` documents of the pipeline commands: ingest, extract, transfer, fuzz, export, eval.

Each model names the top-level keys a consumer may rely on and keeps every other key the stage reports
(extra="allow"), so adding a key to a stage never breaks a consumer or this schema; numbers that can be
non-finite follow Note [Non-finite numbers in --json].
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from agent.cli.json_out import Measure, Versioned
from agent.export.writer import ExportIndex
from agent.extract.stage import ExtractionSummary
from agent.ingest.summary import IngestSummary


class _Open(Versioned):
    model_config = ConfigDict(extra="allow")


class IngestOutput(IngestSummary, Versioned):
    """`ingest github|file --json`: the ingest counts and `issues` (new + updated + unchanged)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def issues(self) -> int:
        return self.new + self.updated + self.unchanged


class ExtractOutput(ExtractionSummary, Versioned):
    """`extract --json`: the extraction counts and the token total."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class TransferOutput(_Open):
    """`transfer --json`: inventory, patterns, candidates and harnesses written."""

    inventory_apis: int
    patterns: int
    candidates: int
    vetoed: int
    harnesses: int
    matcher: str
    llm_stopped: str | None = None
    targets: dict[str, Any] = {}


class FuzzOutput(_Open):
    """`fuzz --json`: the campaign's summary."""

    run_id: int
    exit_reason: str
    harnesses: int
    executions: int
    left_pending: int
    verdicts: dict[str, int]
    elapsed_s: Measure = None
    source_repros: dict[str, float | int] = Field(
        default_factory=dict, description="The source re-check's sandboxed runs of the reports' own repros before the "
        "campaign: due, ran, reproduces, does_not_reproduce, no_verdict, not_run, left (for the next fuzz), seconds.")


class ExportOutput(ExportIndex, Versioned):
    """`export --json`: the folder written and the index.json written into it."""

    model_config = ConfigDict(extra="allow")
    out: str


class EvalExtractionOutput(_Open):
    """`eval extraction --json`: the labelled set, the extractor and its scores."""

    labels: str
    split: str
    extractor: str
    reports: int
    errors: int


class EvalRate(BaseModel):
    """hits of total, and hits/total (0 when total is 0)."""

    hits: int
    total: int
    rate: float


class EvalIssuesOutput(_Open):
    """`eval extraction --issues DUMP --labels FILE --json`: scores on labelled real issues.

    ``split_rule`` is the fixed train/eval rule; ``silent_bug_recall``, ``kind``, ``api`` and ``modes`` are over
    the issues labelled bug with a repro (``targets``), a target without a pattern counting as a miss; the
    ``*_given_pattern`` figures are over the targets that got a pattern. ``misses`` lists train issues only.
    """

    issues: str
    labels: str
    split: Literal["train", "eval", "all"]
    split_rule: str
    extractor: str
    reports: int
    targets: int
    errors: int
    unlabelled_issues: int
    eval_issues_withheld: int
    triage: list[dict[str, Any]]
    confusion: dict[str, dict[str, int]]
    silent_bug_recall: EvalRate
    kind: EvalRate
    api: EvalRate
    modes: EvalRate
    kind_given_pattern: EvalRate
    api_given_pattern: EvalRate
    modes_given_pattern: EvalRate
    misses: list[dict[str, Any]]


class EvalTransferOutput(_Open):
    """`eval transfer --json`: the groups file and each group's ranks, hit@k and MRR."""

    groups_file: str
