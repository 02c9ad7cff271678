"""Export on a real database: one report per signature group, repro scripts that really run, index.json."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent.export.environment import Environment, capture_environment
from agent.export.pipeline import export_findings
from agent.export.writer import ExportError
from db.queries.findings import record_review
from db.store import Store, open_store
from tests.agent.review.rows import (
    COMPILE_SIGNATURE,
    INPUTS_REPRO_TEMPLATE,
    RIGHT_REPRO,
    WRONG_REPRO,
    add_finding,
    build_lineage,
    save_wrong_inputs,
)

SHORT_WRONG_REPRO = WRONG_REPRO.replace('"""Repro: torch.relu against a reference value."""\n', "")


@pytest.fixture(scope="module")
def environment() -> Environment:
    # Real collect_env, once: it spawns pip and lscpu and takes seconds.
    return capture_environment()


@pytest.fixture
def ids(store: Store) -> dict[str, int]:
    with store.session() as session:
        rows = build_lineage(session)
        return {
            "first": add_finding(session, rows.harness_id),
            # Same signature, shorter repro: it becomes the report's minimal repro.
            "second": add_finding(session, rows.harness_id, repro=SHORT_WRONG_REPRO, max_abs_diff=3.0),
            "passed": add_finding(session, rows.harness_id, verdict="passed", signature="", repro=RIGHT_REPRO),
            "jit": add_finding(
                session, rows.direct_harness_id, signature="torch.sigmoid|eager/jit.trace|JIT_Eager_Mismatch|value",
                backend_ablation=None,
            ),
            "rejected": add_finding(session, rows.direct_harness_id, signature="", repro=""),
        }


def _reject(store: Store, finding_id: int) -> None:
    with store.session() as session:
        record_review(session, finding_id, decision="rejected", reviewer="ann", note="noise")


def test_markdown_export_groups_by_signature(store: Store, ids: dict[str, int], environment: Environment, tmp_path: Path) -> None:
    _reject(store, ids["rejected"])
    out = tmp_path / "reports"
    index = export_findings(store, out, status="confirmed", fmt="markdown", environment=environment)

    assert index.report_count == 2 and index.finding_count == 3
    compile_entry, jit_entry = index.reports
    assert compile_entry.finding_ids == [ids["first"], ids["second"]]
    assert compile_entry.signature == COMPILE_SIGNATURE
    assert compile_entry.representative_finding == ids["second"]
    assert compile_entry.repro_files == [f"repro_{ids['first']}.py", f"repro_{ids['second']}.py"]
    assert compile_entry.title.startswith("[Eager/Compile Divergence] torch.relu under torch.compile (inductor)")
    assert compile_entry.source_issue == "https://github.com/pytorch/pytorch/issues/123456"
    assert jit_entry.title.startswith("[Eager/JIT Divergence] torch.sigmoid")
    assert jit_entry.source_issue is None

    on_disk = json.loads((out / "index.json").read_text())
    assert [r["file"] for r in on_disk["reports"]] == [compile_entry.file, jit_entry.file]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["index.json", "collect_env.txt", compile_entry.file, jit_entry.file,
         f"repro_{ids['first']}.py", f"repro_{ids['second']}.py", f"repro_{ids['jit']}.py"]
    )

    text = (out / compile_entry.file).read_text()
    assert text.startswith("# \\[Eager/Compile Divergence\\] torch.relu")
    for section in ("#### Minimal repro", "#### Observed", "#### Expected", "#### Backend ablation",
                    "#### Where this comes from", "### Versions", "collect_env"):
        assert section in text, section
    assert f"```python\n{SHORT_WRONG_REPRO.rstrip()}\n```" in text
    assert "| inductor | mismatch |" in text
    assert "[pytorch/pytorch\\#123456](https://github.com/pytorch/pytorch/issues/123456)" in text
    assert "Compile_Eager_Mismatch ::= APICall(torch.nn.functional.gelu)" in text
    assert f"torch.__version__: {environment.torch_version}" in text
    assert "`topic: fuzzer`" in text
    assert "PyTorch version:" in text  # collect_env output itself
    # Both findings of the group are listed in the one report, not repeated as two reports.
    assert f"| {ids['first']} | confirmed |" in text and f"| {ids['second']} | confirmed |" in text


def test_exported_repros_reproduce_their_verdict_in_a_fresh_interpreter(environment: Environment, tmp_path: Path) -> None:
    # Running the scripts does not depend on the database, so this one runs on SQLite only.
    workdir = tmp_path / "worker"  # where a fuzz worker saved the failing input
    workdir.mkdir()
    inputs_path = save_wrong_inputs(workdir / "inputs_abc.safetensors")
    store = open_store(f"sqlite:///{tmp_path / 'repro.db'}")
    try:
        with store.session() as session:
            rows = build_lineage(session)
            confirmed = add_finding(
                session, rows.harness_id, repro=INPUTS_REPRO_TEMPLATE.format(inputs_path=inputs_path),
                inputs_path=inputs_path,
            )
            passed = add_finding(session, rows.harness_id, verdict="passed", signature="", repro=RIGHT_REPRO)
            record_review(session, confirmed, decision="accepted", reviewer="ann")
            record_review(session, passed, decision="accepted", reviewer="ann", note="keep as a regression check")
        out = tmp_path / "accepted"
        index = export_findings(store, out, status="accepted", fmt="markdown", environment=environment)
    finally:
        store.close()
    shutil.rmtree(workdir)  # the export must not need the worker's files any more
    assert [e.finding_ids for e in index.reports] == [[confirmed], [passed]]
    assert index.reports[0].inputs_files == [f"inputs_{confirmed}.safetensors"]
    assert index.reports[1].inputs_files == []
    script = (out / f"repro_{confirmed}.py").read_text()
    assert inputs_path not in script and f"else 'inputs_{confirmed}.safetensors'" in script
    report = (out / index.reports[0].file).read_text()
    assert f"else 'inputs_{confirmed}.safetensors'" in report and f"holds `inputs_{confirmed}.safetensors`" in report

    expected_exit = {"confirmed": 1, "passed": 0}
    scripts = {entry.verdicts[0]: out / entry.repro_files[0] for entry in index.reports}
    # Both interpreters at once: each spends most of its time importing torch.
    runs = {
        verdict: subprocess.Popen(
            [sys.executable, path.name], cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for verdict, path in scripts.items()
    }
    for verdict, process in runs.items():
        output, _ = process.communicate(timeout=120)
        assert process.returncode == expected_exit[verdict], output
        if verdict == "confirmed":
            assert "MISMATCH" in output and "Greatest absolute difference" in output


def test_missing_inputs_are_reported_not_fatal(store: Store, environment: Environment, tmp_path: Path) -> None:
    gone = str(tmp_path / "gone" / "inputs_x.safetensors")
    with store.session() as session:
        rows = build_lineage(session)
        fid = add_finding(session, rows.harness_id, repro=INPUTS_REPRO_TEMPLATE.format(inputs_path=gone), inputs_path=gone)
    index = export_findings(store, tmp_path / "out", environment=environment)
    assert index.reports[0].inputs_files == []
    text = (tmp_path / "out" / index.reports[0].file).read_text()
    assert f"its saved inputs (`{gone}`) were not found when exporting" in text
    assert (tmp_path / "out" / f"repro_{fid}.py").read_text() == INPUTS_REPRO_TEMPLATE.format(inputs_path=gone)


def test_json_export_and_a_second_export_replaces_the_first(
    store: Store, ids: dict[str, int], environment: Environment, tmp_path: Path
) -> None:
    out = tmp_path / "json"
    (tmp_path / "json").mkdir()
    (out / "notes.txt").write_text("mine")
    first = export_findings(store, out, status="confirmed", fmt="json", environment=environment)
    assert first.report_count == 3  # compile group, jit group, the unsigned confirmed finding
    report = json.loads((out / first.reports[0].file).read_text())
    assert report["title"] == first.reports[0].title
    assert report["backend_ablation"] == {"eager": "match", "aot_eager": "match", "inductor": "mismatch"}
    assert [f["id"] for f in report["findings"]] == [ids["first"], ids["second"]]
    assert report["environment"]["collect_env"].startswith("PyTorch version:")
    assert report["source_issue"]["number"] == 123456
    unsigned = json.loads((out / first.reports[2].file).read_text())
    assert unsigned["repro"] == "" and unsigned["findings"][0]["repro_file"] is None
    assert any(r["rule"] == "minimal standalone repro" and r["status"] == "not_met" for r in unsigned["rules"])

    _reject(store, ids["rejected"])
    _reject(store, ids["jit"])
    second = export_findings(store, out, status="confirmed", fmt="json", environment=environment)
    assert second.report_count == 1
    names = sorted(p.name for p in out.iterdir())
    # Files of the first export that the second does not write are gone; other files stay.
    assert names == sorted(["index.json", "collect_env.txt", "notes.txt", second.reports[0].file,
                            f"repro_{ids['first']}.py", f"repro_{ids['second']}.py"])


def test_nothing_to_export_still_writes_an_index(store: Store, environment: Environment, tmp_path: Path) -> None:
    index = export_findings(store, tmp_path / "empty", status="accepted", fmt="markdown", environment=environment)
    assert index.report_count == 0
    assert json.loads((tmp_path / "empty" / "index.json").read_text())["reports"] == []


def test_out_must_be_a_directory(store: Store, environment: Environment, tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("x")
    with pytest.raises(ExportError, match="exists and is not a directory"):
        export_findings(store, target, environment=environment)
    assert target.read_text() == "x"
