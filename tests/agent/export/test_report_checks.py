"""A report prints the confirmation checks the fuzzer recorded, never checks inferred from the verdict."""

from __future__ import annotations

from pathlib import Path

from agent.export.environment import capture_environment
from agent.export.pipeline import export_findings
from db.store import Store
from fuzz_core import HarnessSpec, run_harness
from tests.agent.review.rows import add_finding, build_lineage
from tests.fuzz_core.test_recorded_checks import LAYOUT_SHAPE


def _report_text(store: Store, out: Path) -> str:
    index = export_findings(store, out, status="confirmed", fmt="markdown",
                            environment=capture_environment(collect_env=False))
    (entry,) = index.reports
    return (out / entry.file).read_text()


def test_a_report_prints_the_recorded_checks_of_its_finding(store: Store, tmp_path: Path) -> None:
    spec = HarnessSpec(api="planted.shape", input_source="code", code=LAYOUT_SHAPE, test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path / "work", instrument="none")
    with store.session() as session:
        add_finding(session, build_lineage(session).harness_id, **result.evidence)
    text = _report_text(store, tmp_path / "reports")
    table = text.split("#### Confirmation checks", 1)[1].split("####", 1)[0]
    rows = [line.split("|")[1:3] for line in table.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [(name.strip(), status.strip()) for name, status in rows] == [
        ("reference accepts input", "held"), ("shape differs", "held"), ("reproducible", "held")]


def test_a_report_of_an_older_finding_says_its_checks_were_not_recorded(store: Store, tmp_path: Path) -> None:
    with store.session() as session:
        add_finding(session, build_lineage(session).harness_id)
    text = _report_text(store, tmp_path / "reports")
    table = text.split("#### Confirmation checks", 1)[1].split("####", 1)[0]
    (row,) = [line for line in table.splitlines() if line.startswith("| checks |")]
    assert row.startswith("| checks | not recorded | checks not recorded") and "stored by an older version" in row
