"""A finding on the source pattern's own API with its own modes names the source issue under "already reported?"."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agent.cli.app import app
from agent.export.environment import capture_environment
from agent.export.pipeline import export_findings
from agent.transfer.source_recheck import ReproRun, record_repro_run
from db.models import Candidate, Harness, Issue
from db.store import Store
from tests.agent.review.rows import add_finding, build_lineage, spec

GELU_SIGNATURE = "torch.nn.functional.gelu|eager/compile:inductor|Compile_Eager_Mismatch|value"
LINK = "https://github.com/pytorch/pytorch/issues/123456"


def _findings(store: Store) -> dict[str, int]:
    """The usual lineage (gelu reported under compile; relu a transfer target), plus a finding on gelu itself."""
    with store.session() as session:
        rows = build_lineage(session)
        issue = session.get(Issue, rows.issue_id)
        issue.state, issue.raw = "closed", {"state_reason": "completed"}
        source = Candidate(pattern_id=rows.pattern_id, target_api="torch.nn.functional.gelu", status="source",
                           adapted_trigger={"special_values": ["nan"]})
        session.add(source)
        session.flush()
        harness = Harness(candidate_id=source.id, spec=spec("torch.nn.functional.gelu", "compile:inductor"),
                          status="done")
        session.add(harness)
        session.flush()
        record_repro_run(session, rows.pattern_id, ReproRun(
            status="does_not_reproduce", reason="it ran clean and its own checks hold (assert)", exit_code=0,
            torch="2.13.0+cpu"))
        return {"source": add_finding(session, harness.id, signature=GELU_SIGNATURE),
                "transferred": add_finding(session, rows.harness_id)}


def test_review_show_names_the_source_issue_as_already_reported(store: Store) -> None:
    ids = _findings(store)
    shown = CliRunner().invoke(app, ["--db", store.url, "review", "show", str(ids["source"])])
    assert shown.exit_code == 0, shown.stderr
    assert (f"already reported: pytorch/pytorch#123456 (closed), the source issue: gelu gives wrong values under"
            f" torch.compile with NaN inputs {LINK}") in shown.stdout
    assert "same API (torch.nn.functional.gelu) and modes (eager vs compile:inductor) as the report" in shown.stdout
    assert "source re-check: fixed in torch 2.13.0+cpu (no longer reproduces: report's repro;" in shown.stdout

    other = CliRunner().invoke(app, ["--db", store.url, "review", "show", str(ids["transferred"])])
    assert other.exit_code == 0, other.stderr
    assert "already reported" not in other.stdout  # on relu the source issue is lineage, not a duplicate
    assert "source re-check: fixed in torch 2.13.0+cpu" in other.stdout  # the pattern line still says it


def test_export_report_lists_the_source_issue_under_already_reported(store: Store, tmp_path: Path) -> None:
    _findings(store)
    index = export_findings(store, tmp_path / "out", environment=capture_environment(collect_env=False))
    texts = {entry.api: (tmp_path / "out" / entry.file).read_text() for entry in index.reports}
    gelu, relu = texts["torch.nn.functional.gelu"], texts["torch.relu"]
    assert "#### Already reported?" in gelu
    assert (f"- Already reported as [pytorch/pytorch\\#123456]({LINK}) (closed), the issue this pattern was extracted"
            " from:") in gelu
    assert "source re-check: fixed in torch 2.13.0+cpu" in gelu
    assert "Already reported as" not in relu
    assert "Source re-check of that original bug on the torch used here: fixed in torch 2.13.0+cpu" in relu
