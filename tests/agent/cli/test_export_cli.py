"""`transfuzz export` through the real CLI: formats, usage errors, the repro gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.app import app
from db.store import Store, open_store
from tests.agent.review.rows import INPUTS_REPRO_TEMPLATE, RIGHT_REPRO, add_finding, build_lineage, save_wrong_inputs

runner = CliRunner()


@pytest.fixture
def populated(store: Store) -> dict[str, int]:
    with store.session() as session:
        rows = build_lineage(session)
        return {
            "a": add_finding(session, rows.harness_id),
            "b": add_finding(session, rows.harness_id),
            "direct": add_finding(session, rows.direct_harness_id, signature="", repro=RIGHT_REPRO),
        }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--status", "all"], "--status 'all' is not one of confirmed, accepted"),
        (["--format", "html"], "--format 'html' is not one of markdown, json"),
    ],
)
def test_bad_options_exit_2(store: Store, tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["--db", store.url, "export", "--out", str(tmp_path / "x"), *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


def test_out_that_is_a_file_exits_2(store: Store, tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("keep")
    result = runner.invoke(app, ["--db", store.url, "export", "--out", str(target)])
    assert result.exit_code == 2 and "is not a directory" in result.stderr
    assert target.read_text() == "keep"


def test_json_export_then_accepted_only(store: Store, populated: dict[str, int], tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["--db", store.url, "--json", "export", "--format", "json", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["report_count"] == 2 and summary["finding_count"] == 3
    assert [r["finding_ids"] for r in summary["reports"]] == [[populated["a"], populated["b"]], [populated["direct"]]]
    assert all((out / r["file"]).suffix == ".json" for r in summary["reports"])
    assert json.loads((out / "index.json").read_text())["reports"] == summary["reports"]

    gated = runner.invoke(
        app, ["--db", store.url, "--json", "export", "--status", "accepted", "--out", str(out)]
    )
    assert gated.exit_code == 0 and json.loads(gated.stdout)["report_count"] == 0
    runner.invoke(app, ["--db", store.url, "review", "accept", str(populated["b"]), "--reviewer", "ann"])
    accepted = runner.invoke(app, ["--db", store.url, "--json", "export", "--status", "accepted", "--out", str(out)])
    assert [r["finding_ids"] for r in json.loads(accepted.stdout)["reports"]] == [[populated["b"]]]
    assert sorted(p.name for p in out.iterdir() if p.name.startswith("repro_")) == [f"repro_{populated['b']}.py"]


def test_check_repro_gate_exits_1_on_a_repro_that_contradicts_its_verdict(tmp_path: Path) -> None:
    # Running repro scripts does not depend on the database: SQLite only.
    url = f"sqlite:///{tmp_path / 'gate.db'}"
    inputs_path = save_wrong_inputs(tmp_path / "inputs_w.pt")
    store = open_store(url)
    try:
        with store.session() as session:
            rows = build_lineage(session)
            # The sandbox runs it from an empty directory: the inputs must reach it as argv[1].
            good = add_finding(
                session, rows.harness_id, repro=INPUTS_REPRO_TEMPLATE.format(inputs_path=inputs_path),
                inputs_path=inputs_path,
            )
            # Verdict confirmed, but its repro does not reproduce: the gate must catch it.
            stale = add_finding(session, rows.direct_harness_id, signature="", repro=RIGHT_REPRO)
    finally:
        store.close()
    out = tmp_path / "out"
    checked = runner.invoke(app, ["--db", url, "export", "--check-repro", "--out", str(out)])
    assert checked.exit_code == 1
    assert f"repro of finding {stale} exited 0, its verdict confirmed expects 1" in checked.stderr
    assert f"finding {good}" not in checked.stderr
    index = json.loads((out / "index.json").read_text())
    assert [[c["agrees"] for c in r["repro_checks"]] for r in index["reports"]] == [[True], [False]]
    assert [[c["exit_code"] for c in r["repro_checks"]] for r in index["reports"]] == [[1], [0]]
    assert index["reports"][1]["rules_met"] is False
    stale_report = (out / index["reports"][1]["file"]).read_text()
    # The heading is Markdown-escaped (brackets too, so no title can open a link); GitHub shows it as
    # "[Eager/JIT Divergence] ...", and index.json keeps the plain title for the title field.
    assert stale_report.startswith("# \\[Eager/JIT Divergence\\] torch.sigmoid under torch.jit.trace differs from eager")
    assert index["reports"][1]["title"].startswith("[Eager/JIT Divergence] torch.sigmoid under torch.jit.trace")
    assert f"- [ ] repro reproduces the verdict: repro\\_{stale}.py exited 0, expected 1" in stale_report
    good_report = (out / index["reports"][0]["file"]).read_text()
    assert "- [x] repro reproduces the verdict: 1 script\\(s\\) run in a fresh interpreter" in good_report
