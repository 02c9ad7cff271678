"""Write an export: one report per signature group, the repro scripts beside them, and index.json.

Files are written to a temporary name and renamed, so a crash never leaves a half-written
report. Files named by a previous export's index.json that this export does not write again are
removed (only those: other files in the directory are never touched), so the directory always
matches its index.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from agent.export.environment import Environment
from agent.export.markdown import render_markdown
from agent.export.bundle import BundledRepro, bundle_repro
from agent.export.report import Report, build_report, with_repro_checks
from agent.export.verify import ReproCheck, run_repro
from db.base import utcnow
from db.queries.findings import FindingRecord, SignatureGroup

Format = Literal["markdown", "json"]
INDEX_NAME = "index.json"
COLLECT_ENV_NAME = "collect_env.txt"


class ExportError(ValueError):
    """The output directory cannot hold an export."""


class GroupContext(BaseModel):
    """What grouping and the "already reported?" check found for one group (agent/review/grouping.py, known.py)."""

    root_cause: str = ""
    possible_duplicates: list[dict[str, Any]] = []
    opinfo_known: list[dict[str, Any]] = []
    known_expected_failure: bool = False


class KnownEntry(BaseModel):
    """A group left out as not new: OpInfo already marks it an expected failure for this op and mode."""

    key: str
    apis: list[str]
    finding_ids: list[int]
    opinfo_known: list[dict[str, Any]]


class IndexEntry(BaseModel):
    number: int
    file: str
    title: str
    bracket: str
    api: str
    kind: str
    reference_mode: str
    test_mode: str
    signature: str
    finding_ids: list[int]
    verdicts: list[str]
    representative_finding: int
    repro_files: list[str]
    inputs_files: list[str]
    source_issue: str | None
    rules_met: bool
    labels: list[str]
    repro_checks: list[ReproCheck] | None = None
    apis: list[str] = []
    root_cause: str = ""
    confirmed: bool = False
    short_repro_files: list[str] = []
    short_repro_checks: list[ReproCheck] | None = None
    possible_duplicates: list[str] = []


class ExportIndex(BaseModel):
    generated_at: datetime
    status: str
    format: Format
    torch_version: str
    python: str
    platform: str
    collect_env_file: str
    report_count: int
    finding_count: int
    reports: list[IndexEntry]
    known_expected_failures: list[KnownEntry] = []

    @property
    def disagreements(self) -> list[ReproCheck]:
        """Repro scripts whose exit code contradicts their finding's verdict."""
        return [c for e in self.reports for c in [*(e.repro_checks or []), *(e.short_repro_checks or [])]
            if c.agrees is False]


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _previous_files(out: Path) -> set[str]:
    """Plain file names a previous export listed; an unreadable index lists nothing."""
    try:
        data = json.loads((out / INDEX_NAME).read_text(encoding="utf-8"))
        names = {COLLECT_ENV_NAME}
        for entry in data.get("reports", []):
            names.add(entry["file"])
            names.update(entry.get("repro_files", []))
            names.update(entry.get("inputs_files", []))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set()
    return {n for n in names if isinstance(n, str) and n == Path(n).name and not n.startswith(".")}


def prepare_out_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ExportError(f"--out {out} exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"cannot create --out {out}: {exc.strerror or exc}") from None


def write_export(
    groups: list[SignatureGroup],
    out: Path,
    *,
    status: str,
    fmt: Format,
    environment: Environment,
    check_repro: bool = False,
    repro_timeout_s: float = 120.0,
    sandbox: bool = True,
    contexts: dict[str, GroupContext] | None = None,
) -> ExportIndex:
    """``contexts`` (by group key) carry root cause and duplicate matches; a known expected failure is not a report."""
    prepare_out_dir(out)
    contexts = contexts or {}
    known: list[KnownEntry] = []
    stale = _previous_files(out)
    written: set[str] = set()
    entries: list[IndexEntry] = []

    _write(out / COLLECT_ENV_NAME, environment.collect_env.rstrip() + "\n")
    written.add(COLLECT_ENV_NAME)
    number = 0
    for group in groups:
        context = contexts.get(group.key, GroupContext())
        if context.known_expected_failure:
            known.append(KnownEntry(key=group.key, apis=sorted({str(f.harness_spec.get("api", "?")) for f in group.findings}),
                                    finding_ids=[f.id for f in group.findings], opinfo_known=context.opinfo_known))
            continue
        number += 1
        bundles = {b.finding_id: b for b in (bundle_repro(out, f) for f in group.findings) if b is not None}
        for bundle in bundles.values():
            written.add(bundle.repro_file)
            if bundle.inputs_file:
                written.add(bundle.inputs_file)
            if bundle.short_file:
                written.add(bundle.short_file)
        report = build_report(number, group, environment, bundles, root_cause=context.root_cause,
                              possible_duplicates=context.possible_duplicates, opinfo_known=context.opinfo_known)
        checks = short_checks = None
        if check_repro:
            checks = _check_repros(out, group, bundles, repro_timeout_s, sandbox)
            short_checks = _check_repros(out, group, bundles, repro_timeout_s, sandbox, short=True)
            report = with_repro_checks(report, checks + short_checks)
        name = f"{report.slug}.md" if fmt == "markdown" else f"{report.slug}.json"
        _write(out / name, _render(report, fmt))
        written.add(name)
        entries.append(_entry(report, name, list(bundles.values()), checks, short_checks))

    index = ExportIndex(
        generated_at=utcnow(),
        status=status,
        format=fmt,
        torch_version=environment.torch_version,
        python=environment.python,
        platform=environment.platform,
        collect_env_file=COLLECT_ENV_NAME,
        report_count=len(entries),
        finding_count=sum(len(e.finding_ids) for e in entries),
        reports=entries,
        known_expected_failures=known,
    )
    _write(out / INDEX_NAME, index.model_dump_json(indent=2) + "\n")
    for name in stale - written:
        (out / name).unlink(missing_ok=True)
    return index


def _check_repros(
    out: Path, group: SignatureGroup, bundles: dict[int, BundledRepro], timeout_s: float, sandbox: bool = True,
    *, short: bool = False,
) -> list[ReproCheck]:
    """Run the group's repro scripts (the long ones, or with `short` the short ones), a few at once: each is a
    separate interpreter that mostly waits on torch's import."""
    from concurrent.futures import ThreadPoolExecutor

    runnable = [f for f in group.findings if f.id in bundles and (bundles[f.id].short_file or not short)]

    def check(finding: FindingRecord) -> ReproCheck:
        bundle = bundles[finding.id]
        if short:
            return run_repro(out / str(bundle.short_file), finding_id=finding.id, verdict=finding.verdict,
                             timeout_s=timeout_s, sandbox=sandbox)
        args = [str((out / bundle.inputs_file).resolve())] if bundle.inputs_file else []
        return run_repro(out / bundle.repro_file, finding_id=finding.id, verdict=finding.verdict, args=args,
                         timeout_s=timeout_s, sandbox=sandbox)

    workers = max(1, min(len(runnable), os.cpu_count() or 1, 4))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(check, runnable))


def _render(report: Report, fmt: Format) -> str:
    if fmt == "markdown":
        return render_markdown(report)
    return report.model_dump_json(indent=2) + "\n"


def _entry(report: Report, name: str, bundles: list[BundledRepro], checks: list[ReproCheck] | None,
           short_checks: list[ReproCheck] | None = None) -> IndexEntry:
    source = report.source_issue
    return IndexEntry(
        number=report.number,
        file=name,
        title=report.title,
        bracket=report.bracket,
        api=report.api,
        kind=report.kind,
        reference_mode=report.reference_mode,
        test_mode=report.test_mode,
        signature=report.signature,
        finding_ids=report.finding_ids,
        verdicts=sorted({f.verdict for f in report.findings}),
        representative_finding=report.representative_finding,
        repro_files=[b.repro_file for b in bundles],
        inputs_files=[b.inputs_file for b in bundles if b.inputs_file],
        source_issue=source.url if source else None,
        rules_met=report.rules_met,
        labels=report.labels,
        repro_checks=checks,
        apis=report.apis,
        root_cause=report.root_cause,
        confirmed=report.confirmed,
        short_repro_files=[b.short_file for b in bundles if b.short_file],
        short_repro_checks=short_checks,
        possible_duplicates=[str(d.get("url") or d.get("ref")) for d in report.possible_duplicates],
    )
