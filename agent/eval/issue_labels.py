"""Labels of real tracker issues, joined by number to a dump of those issues, and the fixed split.

Note [Real-issue labels and the fixed split]
A labels file in this format is JSON Lines, one labelled issue a line: ``number``, ``url``,
``kind``, ``verdict`` (``bug`` | ``not_bug`` | ``unknown``), ``has_repro``, ``apis``, ``modes``,
``dtypes``, ``trigger``, ``evidence``. Its issues are in a separate dump (a GitHub REST JSON
array, read by ingest's own stream and record checks: agent/ingest/stream.py, records.py), and
a label is joined to the dump's issue with the same number. A label whose issue is not in the
dump, a malformed line or a repeated number is an error naming the line; fields this format does
not name are ignored, so a richer labels file still loads.

The split is fixed by the issue number alone and was decided before any rule was tuned on it:
an issue is in ``eval`` when int(sha256(str(number)).hexdigest(), 16) % 2 == 1, else in
``train``. Rules of the offline analyzer may be written looking only at ``train``; ``eval`` is
reported, never read while writing rules (``--misses`` lists train issues only). Adding issues
never moves an existing one to the other side.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from agent.eval.labels import LabelsFileError
from db.queries.issues import IssueRow

Verdict = Literal["bug", "not_bug", "unknown"]
VERDICTS: tuple[str, ...] = ("bug", "not_bug", "unknown")
IssueSplit = Literal["train", "eval"]
SPLIT_RULE = "eval when int(sha256(str(number).encode()).hexdigest(), 16) % 2 == 1, else train"


class DumpFileError(ValueError):
    """The issue dump cannot be used; the message names the file and, where there is one, the record."""


class IssueLabel(BaseModel):
    """Ground truth of one real issue."""

    model_config = ConfigDict(extra="ignore")

    number: int = Field(gt=0)
    url: str = ""
    kind: str = Field(min_length=1, max_length=64)  # a PatternKind, or a label such as "Other" no kind of ours names
    verdict: Verdict
    has_repro: StrictBool
    apis: list[str] = Field(default_factory=list)
    modes: list[str] = Field(default_factory=list)
    dtypes: list[str] = Field(default_factory=list)
    trigger: str = ""
    evidence: str = ""


@dataclass(frozen=True)
class LabelLine:
    """A label and the line of the labels file it came from."""

    line: int
    label: IssueLabel


@dataclass(frozen=True)
class LabelledIssue:
    """A label joined to its issue as ingest normalises it."""

    label: IssueLabel
    issue: IssueRow

    @property
    def number(self) -> int:
        return self.label.number

    @property
    def split(self) -> str:
        return issue_split(self.label.number)


def issue_split(number: int) -> str:
    """``train`` or ``eval``, from the issue number only (Note [Real-issue labels and the fixed split])."""
    return "eval" if int(hashlib.sha256(str(number).encode()).hexdigest(), 16) % 2 == 1 else "train"


def parse_issue_labels(text: str, source: str = "<labels>") -> list[LabelLine]:
    """Every label of a JSON Lines text; the first bad line raises LabelsFileError with its number and reason."""
    found: list[LabelLine] = []
    seen: dict[int, int] = {}
    for line_number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            label = IssueLabel.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            raise LabelsFileError(f"{source}:{line_number}: not JSON ({exc.msg})") from exc
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "record"
            raise LabelsFileError(f"{source}:{line_number}: {where}: {first['msg']}") from exc
        if label.number in seen:
            raise LabelsFileError(f"{source}:{line_number}: issue #{label.number} is labelled again "
                                  f"(first on line {seen[label.number]})")
        seen[label.number] = line_number
        found.append(LabelLine(line_number, label))
    if not found:
        raise LabelsFileError(f"{source}: no records")
    return found


def load_issue_labels(path: Path) -> list[LabelLine]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelsFileError(f"{path}: cannot read ({exc})") from exc
    return parse_issue_labels(text, str(path))


def load_dump(path: Path) -> dict[int, IssueRow]:
    """The dump's issues by number, read and checked exactly as `transfuzz ingest file` reads them.

    Pull requests are skipped as ingest skips them; a record ingest would skip as bad, or a number
    that occurs twice, is an error here: a measurement over part of the labelled set would not say so.
    """
    from agent.ingest.records import BadRecord, PullRequest, normalise
    from agent.ingest.stream import DumpFormatError, iter_dump

    if not path.is_file():
        raise DumpFileError(f"no such file: {path}")
    issues: dict[int, IssueRow] = {}
    try:
        for record in iter_dump(path):
            if record.error is not None:
                raise DumpFileError(f"{path}: {record.position}: {record.error}")
            try:
                row = normalise(record.value)
            except PullRequest:
                continue
            except BadRecord as exc:
                raise DumpFileError(f"{path}: {record.position}: {exc}") from None
            if row.number in issues:
                raise DumpFileError(f"{path}: {record.position}: issue #{row.number} occurs twice")
            issues[row.number] = row
    except DumpFormatError as exc:
        raise DumpFileError(str(exc)) from None
    except OSError as exc:
        raise DumpFileError(f"{path}: cannot read ({exc})") from None
    return issues


def join(labels: list[LabelLine], issues: dict[int, IssueRow], source: str = "<labels>") -> list[LabelledIssue]:
    """Each label with its issue, in the labels file's order; a label whose issue is missing names its line."""
    joined = []
    for entry in labels:
        issue = issues.get(entry.label.number)
        if issue is None:
            raise LabelsFileError(f"{source}:{entry.line}: issue #{entry.label.number} is not in the issue dump")
        joined.append(LabelledIssue(entry.label, issue))
    return joined


def select_issue_split(reports: list[LabelledIssue], split: str) -> list[LabelledIssue]:
    """``train``, ``eval`` or ``all``."""
    return list(reports) if split == "all" else [r for r in reports if r.split == split]
