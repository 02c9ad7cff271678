"""The real CLI on Ray: `transfuzz fuzz --executor ray` with a short budget on harnesses the pipeline made from the
sample issues. Issue 23: such a run once waited 13 minutes for an actor no node could place (a device:cuda
harness asked for a GPU on a machine without one; Note [Actors that can be placed] in
agent/campaign/executors.py). The run must end on its own (the CLI returns: the subprocess timeout is only a guard
against a hang, never the check) and leave every harness it claimed with its verdict or back in `pending`.

One small run (Ray's start-up is slow): one worker, a budget of 20 s, and a seeded `--sampling` that picks two or
three harnesses, the first of them a cpu-vs-cuda one, so the harness that hung is the first the actor runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from agent.campaign.stage import sampled
from agent.cli.app import app
from db import models
from db.queries import campaign as q
from db.store import open_store
from tests.conftest import REPO_ROOT, SAMPLE_ISSUES

pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.slow, pytest.mark.timeout(1800)]
runner = CliRunner()
HANG_GUARD_S = 1500  # a hang guard only: Ray start + actor start (300 s bound) + budget + one harness's grace
RAY_FAILURES = ("no Ray node started an actor", "gave no answer", "ray actor lost")


def _cli(db_url: str, *args: str) -> dict:
    result = runner.invoke(app, ["--db", db_url, "--json", *args])
    assert result.exit_code == 0, (result.stdout[-2000:], result.stderr[-3000:])
    return json.loads(result.stdout)


def _sampling(pending: list[tuple[int, dict]], fraction: float) -> tuple[int, list[tuple[int, dict]]]:
    """A seed whose `--sampling fraction` picks 2-3 harnesses, the first (in the campaign's order) cpu-vs-cuda
    and none compiled (a first inductor compilation on a busy machine takes most of a minute)."""
    for seed in range(20000):
        chosen = [(hid, spec) for hid, spec in pending if sampled(hid, seed, fraction)]
        if (2 <= len(chosen) <= 3 and chosen[0][1].get("test_mode") == "device:cuda"
                and not any(str(spec.get("test_mode", "")).startswith("compile:") for _, spec in chosen)):
            return seed, chosen
    raise AssertionError(f"no seed samples a cpu-vs-cuda harness first among {len(pending)} pending harnesses")


def test_fuzz_on_ray_ends_on_its_own_and_accounts_for_every_claimed_harness(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    db_url = f"sqlite:///{tmp_path / 'ray.db'}"
    _cli(db_url, "ingest", "file", str(SAMPLE_ISSUES))
    _cli(db_url, "extract")
    _cli(db_url, "transfer", "--top-k", "1")
    store = open_store(db_url)
    try:
        with store.session() as session:
            pending = q.pending_harnesses(session)
        assert any(spec.get("test_mode") == "device:cuda" for _, spec in pending), (
            "the samples hold a cpu-vs-cuda report; its harnesses are what hung on Ray")
        fraction = 2.5 / len(pending)
        seed, chosen = _sampling(pending, fraction)

        env = {k: v for k, v in os.environ.items() if k not in ("TRANSFUZZ_DB_URL", "RAY_ADDRESS")}
        env["TRANSFUZZ_ARTIFACTS_DIR"] = str(tmp_path / "artifacts")
        command = [sys.executable, "-m", "agent.cli", "--db", db_url, "--json", "fuzz", "--executor", "ray",
                   "--budget", "20s", "--workers", "1", "--scheduler", "even", "--min-inputs", "1",
                   "--sampling", repr(fraction), "--seed", str(seed)]
        try:
            proc = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                                  timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"the Ray campaign did not end (hang guard {HANG_GUARD_S} s): {str(exc.stderr)[-3000:]}")
        assert proc.returncode == 0, proc.stderr[-4000:]
        out = json.loads(proc.stdout)
        assert out["exit_reason"] in ("completed", "budget"), out

        with store.session() as session:
            run = session.get(models.Run, out["run_id"])
            assert run.ended_at is not None and run.exit_reason == out["exit_reason"]
            harnesses = {h.id: h for h in session.query(models.Harness)}
            findings = list(session.query(models.Finding).filter_by(run_id=run.id))
            claimed = {hid for hid, h in harnesses.items() if h.attempts}
            per_harness = Counter(f.harness_id for f in findings)
            # Every claimed harness has its one verdict or went back to pending; nothing is left `running`.
            assert not [hid for hid, h in harnesses.items() if h.status == "running"]
            assert claimed <= {hid for hid, _ in chosen} and len(claimed) == out["harnesses"] >= 1
            for hid in claimed:
                status = harnesses[hid].status
                assert status == "pending" or (status in ("done", "error") and per_harness[hid] == 1), (
                    hid, status, per_harness)
            assert set(per_harness) <= claimed and set(per_harness.values()) <= {1}
            assert run.counters.get("tasks", 0) == len(findings) == sum(out["verdicts"].values())
            # The cpu-vs-cuda harness ran first and has a verdict of its own, not an actor that never started.
            first = chosen[0][0]
            assert first in claimed and per_harness[first] == 1, (out, per_harness)
            cuda_finding = next(f for f in findings if f.harness_id == first)
            for finding in findings:
                assert not any(text in finding.reason for text in RAY_FAILURES), (finding.verdict, finding.reason)
            if not torch.cuda.is_available():  # no GPU in the cluster: the harness says so itself, as on the pool
                assert cuda_finding.verdict == "not_applicable" and "cuda" in cuda_finding.reason.lower(), (
                    cuda_finding.verdict, cuda_finding.reason)
    finally:
        store.close()
