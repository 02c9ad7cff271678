"""End to end through the CLI: an issue whose code calls torch.os.system never yields a pattern,
candidate, harness or inventory row naming it, and nothing it names is run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from agent.cli.app import app
from agent.extract import semantics_for
from db import models
from db.queries import transfer as transfer_queries
from db.store import open_store
from tests.conftest import SAMPLE_ISSUES

runner = CliRunner()
FENCE = "```"
BOGUS = {"torch.os.system", "os.system", "builtins.eval", "torch.sys.exit"}
INVENTORY = ["torch.nn.functional.relu6", "torch.nn.functional.hardtanh", "torch.nn.functional.relu"]


def _attack_issue(benign: dict, marker: Path) -> dict:
    """Issue 101 of the samples (a real silent-bug report) with its API swapped for torch.os.system."""
    body = ("When the input contains a NaN, eager `torch.os.system` returns NaN but the same call traced with "
            "`torch.jit.trace` returns `0.` once it has been called a few times; NaN checks never fire.\n\n"
            f"{FENCE}python\nimport torch\n\nx = torch.randn(2, 4)\nx[0, 1] = float('nan')\n"
            f"torch.os.system(command='touch {marker}')\n"
            "traced = torch.jit.trace(torch.os.system, x)\nfor _ in range(3):\n    out_traced = traced(x)\n"
            "out_eager = torch.os.system(x)\n"
            "print(out_eager.isnan().sum().item(), out_traced.isnan().sum().item())\n"
            f"{FENCE}\n")
    return {**benign, "number": 9001, "id": 9001, "title": "torch.jit.trace: torch.os.system maps NaN to 0, eager keeps NaN",
            "body": body, "html_url": "https://github.com/pytorch/pytorch/issues/9001"}


@pytest.fixture
def attacked_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path, Path]:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TRANSFUZZ_EMBEDDING_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TRANSFUZZ_LLM", "offline")
    marker = tmp_path / "pwned"
    benign = next(i for i in json.loads(SAMPLE_ISSUES.read_text()) if i["number"] == 101)  # relu6 NaN under trace
    dump = tmp_path / "issues.json"
    dump.write_text(json.dumps([benign, _attack_issue(benign, marker)]))
    url = f"sqlite:///{tmp_path / 'transfuzz.db'}"
    store = open_store(url)
    try:  # a small real inventory (as `transfer` would compute it), plus a row an older version let in
        rows = [{"api": api, **{k: v for k, v in semantics_for(api).model_dump().items()
                                if k in ("category", "summary", "parameters", "dtypes")},
                 "details": {}, "torch_version": torch.__version__} for api in INVENTORY]
        rows.append({**rows[0], "api": "torch.os.system"})
        with store.session() as session:
            transfer_queries.upsert_semantics_rows(session, rows)
            transfer_queries.record_inventory_snapshot(session, torch.__version__, len(rows), "offline")
    finally:
        store.close()
    return url, dump, marker


def _cli(url: str, *args: str) -> dict:
    result = runner.invoke(app, ["--db", url, "--json", *args])
    assert result.exit_code == 0, (result.stdout[-2000:], result.stderr[-2000:])
    return json.loads(result.stdout)


def test_a_torch_os_system_issue_leaves_no_trace_in_patterns_candidates_harnesses_or_inventory(attacked_db) -> None:
    url, dump, marker = attacked_db
    _cli(url, "ingest", "file", str(dump))
    _cli(url, "extract")
    _cli(url, "transfer")
    store = open_store(url)
    try:
        with store.session() as session:
            patterns = session.query(models.Pattern).all()
            attack = [p for p in patterns if p.issue.number == 9001]
            assert attack and all(p.api is None and p.status == "error" for p in attack)
            assert "torch.os.system rejected (re-exported module os)" in attack[0].error
            assert {p.api for p in patterns if p.api} == {"torch.nn.functional.relu6"}  # the benign issue still works
            candidates = {c.target_api for c in session.query(models.Candidate)}
            assert "torch.nn.functional.hardtanh" in candidates and not candidates & BOGUS
            specs = {h.spec["api"] for h in session.query(models.Harness)}
            assert specs and not specs & BOGUS
            inventory = {s.api for s in transfer_queries.all_semantics(session)}
            assert inventory == set(INVENTORY)
    finally:
        store.close()
    assert not marker.exists()
