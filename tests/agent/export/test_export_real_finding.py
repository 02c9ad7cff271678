"""Export of a real finding: a sandboxed WorkerPool run confirms and minimises float16 lp_pool1d, then
`transfuzz export --check-repro` writes its short repro, names a stored issue as a possible
duplicate, and leaves out a group that OpInfo already marks as an expected failure."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import torch
from typer.testing import CliRunner

from agent.cli.app import app
from db.models import Harness, Issue
from db.queries.campaign import record_result
from db.store import open_store
from fuzz_core import HarnessSpec, WorkerPool
from fuzz_core.short_repro import MAX_LINES
from tests.agent.review.rows import add_finding, spec

runner = CliRunner()

# float16 lp_pool1d with norm_type=4 raises x to the 4th power in float16: |x| >= 16 gives x**4 > 65504, so it is
# inf where float32 and float64 give |x| (at most 30, far inside float16's range). kernel_size=1 lets the shrinker
# reach a single element.
LP_POOL = HarnessSpec(
    api="torch.nn.functional.lp_pool1d", reference_mode="eager", test_mode="dtype:float16", oracle="nan_inf",
    input_source="described", seed=1776983066, kind="Precision_Mismatch",
    inputs={"args": [{"kind": "tensor", "tensor": {"shape": [2, 8], "low": -30.0, "high": 30.0}},
                     {"kind": "float", "value": 4.0}, {"kind": "int", "value": 1}]})
# An issue about the same API, mode and symptom; its stored url is not where the link may point.
DUPLICATE = {"repo": "pytorch/pytorch", "number": 424242, "state": "closed",
             "title": "torch.nn.functional.lp_pool1d gives inf under float16 for inputs of 16 and above",
             "body": "F.lp_pool1d(x.half(), norm_type=4, kernel_size=1) is inf once |x| >= 16",
             "url": "https://example.invalid/not-this-link"}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    # Running the worker and the repro scripts does not depend on the database: SQLite only.
    root = tmp_path_factory.mktemp("real_finding")
    with WorkerPool(1, task_timeout_s=300, workdir=root / "work", minimise_s=20.0) as pool:
        result = pool.submit(LP_POOL, budget_s=60).result()
    assert result.verdict == "confirmed", result.reason
    url = f"sqlite:///{root / 'real.db'}"
    store = open_store(url)
    try:
        with store.session() as session:
            harness = Harness(candidate_id=None, spec=LP_POOL.to_dict(), status="done")
            session.add(harness)
            session.flush()
            lp_pool = record_result(session, harness.id, None, verdict=result.verdict, reason=result.reason,
                                  evidence=result.evidence, repro=result.repro, signature=result.signature)
            session.add(Issue(content_hash="1" * 64, **DUPLICATE))
            # OpInfo marks torch.arange's TestJit.test_variant_consistency_jit (float32) an expected failure.
            known_harness = Harness(candidate_id=None, spec=spec("torch.arange", "jit.trace", "JIT_Eager_Mismatch"),
                                    status="done")
            session.add(known_harness)
            session.flush()
            known = add_finding(session, known_harness.id, signature="torch.arange|eager/jit.trace|value",
                                backend_ablation=None)
    finally:
        store.close()
    out = root / "out"
    done = runner.invoke(app, ["--db", url, "--json", "export", "--check-repro", "--out", str(out)])
    assert done.exit_code == 0, done.stderr
    index = json.loads((out / "index.json").read_text())
    return {"out": out, "index": index, "lp_pool": lp_pool, "known": known, "evidence": result.evidence}


def _lp_pool_entry(exported: dict[str, Any]) -> dict[str, Any]:
    (entry,) = [r for r in exported["index"]["reports"] if r["api"] == LP_POOL.api]
    return entry


def test_minimised_real_finding_gets_a_short_repro_that_exits_1_in_the_sandbox(exported: dict[str, Any]) -> None:
    shrink = exported["evidence"]["minimised"]["shrink"]
    assert shrink["elements_before"] > 1 and shrink["elements_after"] == 1
    entry = _lp_pool_entry(exported)
    assert entry["finding_ids"] == [exported["lp_pool"]] and entry["confirmed"] is True and entry["rules_met"] is True
    assert [(c["exit_code"], c["agrees"]) for c in entry["short_repro_checks"]] == [(1, True)]
    (short_file,) = entry["short_repro_files"]
    script = (exported["out"] / short_file).read_text()
    assert len(script.splitlines()) <= MAX_LINES
    (literal,) = re.findall(r"^x0 = (torch\.tensor\(.*\))$", script, re.M)
    assert eval(literal, {"torch": torch}).numel() == 1  # noqa: S307 - one element, written inline
    report = (exported["out"] / entry["file"]).read_text()
    assert "```python\n" + script.rstrip() + "\n```" in report  # the short repro itself is in the report
    # The long oracle script and its input (the minimised one: Note [One input per finding]) stay attached.
    assert all((exported["out"] / name).exists() for name in entry["repro_files"] + entry["inputs_files"])
    assert "- [ ]" not in report


def test_stored_issue_is_a_possible_duplicate_linked_from_repo_and_number(exported: dict[str, Any]) -> None:
    entry = _lp_pool_entry(exported)
    link = "https://github.com/pytorch/pytorch/issues/424242"
    assert entry["possible_duplicates"] == [link]
    report = (exported["out"] / entry["file"]).read_text()
    assert f"- Possible duplicate of [pytorch/pytorch\\#424242]({link}) (closed):" in report
    assert "example.invalid" not in report


def test_opinfo_expected_failure_is_listed_not_exported(exported: dict[str, Any]) -> None:
    index = exported["index"]
    assert [r["api"] for r in index["reports"]] == ["torch.nn.functional.lp_pool1d"]
    (known,) = index["known_expected_failures"]
    assert known["apis"] == ["torch.arange"] and known["finding_ids"] == [exported["known"]]
    assert any(e["kind"] == "expected failure" and e["test"] == "TestJit.test_variant_consistency_jit"
               for e in known["opinfo_known"])
    assert not any("arange" in p.name for p in exported["out"].iterdir())
