"""The labelled evaluation set of issue reports: its schema and a loader that names the bad line.

Note [Evaluation labels]
Each line of the JSON Lines file is one report written in our own words (never a copied issue)
with its ground truth. ``split`` is fixed when the record is written: rules of the offline
analyzer may be written against ``dev`` only, ``heldout`` measures whether they generalise.
``kind``/``apis``/``modes`` describe the pattern a perfect extractor would store; ``also_kinds``
lists kinds that are also right (a custom autograd.Function under compile is a compile report
and a gradient report), ``apis`` lists every acceptable API (first preferred) and ``modes``
every acceptable (reference, test) pair; an empty ``modes`` means no mode pair of ours can
express the report (an MPS-only difference).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agent.llm.schemas import FalseAlarmClass
from agent.patterns import KNOWN_MODES, PatternKind

Split = Literal["dev", "heldout"]
TriageClass = Literal["silent_bug", "not_a_bug", "not_silent"]
TRIAGE_CLASSES: tuple[str, ...] = ("silent_bug", "not_a_bug", "not_silent")


class LabelsFileError(ValueError):
    """The labels file cannot be used; the message names the line and the field."""


class ReportLabels(BaseModel):
    """Ground truth of one report."""

    model_config = ConfigDict(extra="forbid")

    triage: TriageClass
    false_alarm_class: FalseAlarmClass | None = None
    kind: PatternKind | None = None
    also_kinds: list[PatternKind] = Field(default_factory=list)
    apis: list[str] = Field(default_factory=list)
    modes: list[tuple[str, str]] = Field(default_factory=list)
    repro_runs_on_cpu: bool = True

    @model_validator(mode="after")
    def _consistent(self) -> ReportLabels:
        if (self.triage == "not_a_bug") != (self.false_alarm_class is not None):
            raise ValueError("false_alarm_class is set exactly when triage is not_a_bug")
        if self.triage == "silent_bug" and (self.kind is None or not self.apis):
            raise ValueError("a silent_bug needs its kind and at least one api")
        for pair in self.modes:
            unknown = [m for m in pair if m not in KNOWN_MODES]
            if unknown:
                raise ValueError(f"unknown mode {unknown[0]!r}")
        return self

    def accepted_kinds(self) -> set[str]:
        return {k.value for k in ([self.kind] if self.kind else []) + self.also_kinds}


class LabelledReport(BaseModel):
    """One issue report of the evaluation set and its labels."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=64)
    split: Split
    category: str = Field(min_length=1, max_length=64)
    title: str
    body: str = ""
    comments: list[str] = Field(default_factory=list)
    tracker_labels: list[str] = Field(default_factory=list)
    labels: ReportLabels


def parse_labels(text: str, source: str = "<labels>") -> list[LabelledReport]:
    """Every record of a JSON Lines text; the first bad line raises with its number and reason."""
    reports: list[LabelledReport] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            report = LabelledReport.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            raise LabelsFileError(f"{source}:{number}: not JSON ({exc.msg})") from exc
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "record"
            raise LabelsFileError(f"{source}:{number}: {where}: {first['msg']}") from exc
        if report.id in seen:
            raise LabelsFileError(f"{source}:{number}: duplicate id {report.id!r}")
        seen.add(report.id)
        reports.append(report)
    if not reports:
        raise LabelsFileError(f"{source}: no records")
    return reports


def load_labels(path: Path) -> list[LabelledReport]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelsFileError(f"{path}: cannot read ({exc})") from exc
    return parse_labels(text, str(path))


def select_split(reports: list[LabelledReport], split: str) -> list[LabelledReport]:
    """``dev``, ``heldout`` or ``all``."""
    return list(reports) if split == "all" else [r for r in reports if r.split == split]
