"""Fault tests on real processes and a real PostgreSQL: drivers racing, a driver SIGKILLed and replaced, the
database restarted mid-campaign, a Ray actor SIGKILLed mid-harness. Afterwards no harness is lost, none has
two verdicts, and every run's counters agree with its rows."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from agent.campaign.stage import CampaignConfig, run_campaign
from db import models
from db.queries import transfer as tq
from db.store import Store
from tests.conftest import PG_URL_ENV
from tests.db.fixtures import add_issue_with_pattern

pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.slow, pytest.mark.postgres,
              pytest.mark.skipif(not os.environ.get(PG_URL_ENV), reason=f"{PG_URL_ENV} not set")]

INPUTS = {"args": [{"kind": "tensor", "tensor": {"shape": [4, 6]}}]}
SPEC = {"api": "torch.relu", "reference_mode": "eager", "test_mode": "layout:noncontiguous",
        "input_source": "described", "inputs": INPUTS, "kind": "Layout_Mismatch"}
PG_CLUSTER = ("15", "main")


@pytest.fixture(autouse=True)
def postgres_only(store: Store) -> None:
    if store.engine.dialect.name != "postgresql":
        pytest.skip("many drivers share one PostgreSQL; SQLite refuses a second driver (tests/db)")


def _harnesses(store: Store, n: int) -> list[int]:
    pattern_id = add_issue_with_pattern(store)
    with store.session() as session:
        [candidate] = tq.add_candidates(session, pattern_id, [{"target_api": "torch.relu", "score": 0.9}])
        return [tq.add_harness(session, candidate.id, {**SPEC, "seed": i}).id for i in range(n)]


# Work is bounded by inputs per harness, not by a budget the test expects to be enough: the budget is a cap far
# above the work (a busy machine is slow, never wrong), and the waits below are hang guards.
MAX_EXECUTIONS = 2000
HANG_GUARD_S = 600


def _driver(url: str, tmp: Path, name: str) -> subprocess.Popen[str]:
    command = [str(Path(sys.executable).parent / "transfuzz"), "--db", url, "--json", "fuzz", "--budget", "1800s",
               "--max-executions", str(MAX_EXECUTIONS), "--workers", "1", "--stale-after", "3",
               "--scheduler", "even", "--min-inputs", "1"]
    return subprocess.Popen(command, stdout=open(tmp / f"{name}.out", "w"), stderr=open(tmp / f"{name}.err", "w"),
                            text=True, env={**os.environ, "TRANSFUZZ_ARTIFACTS_DIR": str(tmp / name)})


def _findings(store: Store) -> int:
    with store.session() as session:
        return session.query(models.Finding).count()


def _wait_for(condition, timeout_s: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.3)


def assert_nothing_lost_nothing_doubled(store: Store, harness_ids: list[int]) -> None:
    with store.session() as session:
        statuses = {h.id: h.status for h in session.query(models.Harness).filter(models.Harness.id.in_(harness_ids))}
        assert set(statuses.values()) <= {"done", "error"}, statuses  # none lost: every one decided
        per_harness = Counter(f.harness_id for f in session.query(models.Finding))
        assert set(per_harness) == set(harness_ids) and set(per_harness.values()) == {1}, per_harness
        for run in session.query(models.Run).filter(models.Run.command == "fuzz"):
            rows = Counter(f.verdict for f in session.query(models.Finding).filter_by(run_id=run.id))
            counted = {k.split(":", 1)[1]: v for k, v in (run.counters or {}).items() if k.startswith("verdict:")}
            assert counted == dict(rows), (run.id, run.counters, rows)
            assert (run.counters or {}).get("tasks", 0) == sum(rows.values())


def test_two_drivers_race_and_a_killed_one_is_replaced(store: Store, db_url: str, tmp_path: Path) -> None:
    harness_ids = _harnesses(store, 8)
    first, second = _driver(db_url, tmp_path, "a"), _driver(db_url, tmp_path, "b")
    _wait_for(lambda: _findings(store) >= 1, HANG_GUARD_S)
    first.send_signal(signal.SIGKILL)  # mid-campaign: its claimed harness stays `running`
    first.wait()
    time.sleep(4)  # its heartbeat goes stale (--stale-after 3)
    third = _driver(db_url, tmp_path, "c")
    assert second.wait(timeout=HANG_GUARD_S) == 0 and third.wait(timeout=HANG_GUARD_S) == 0, (tmp_path / "c.err").read_text()[-2000:]
    assert_nothing_lost_nothing_doubled(store, harness_ids)


def test_postgres_restart_mid_campaign(store: Store, db_url: str, tmp_path: Path) -> None:
    harness_ids = _harnesses(store, 5)
    driver = _driver(db_url, tmp_path, "a")
    _wait_for(lambda: _findings(store) >= 1, HANG_GUARD_S)
    try:
        subprocess.run(["pg_ctlcluster", *PG_CLUSTER, "restart"], check=True, timeout=60)
    finally:  # the database must come back whatever happened
        subprocess.run(["pg_ctlcluster", *PG_CLUSTER, "start"], timeout=60)
    assert driver.wait(timeout=HANG_GUARD_S) == 0, (tmp_path / "a.err").read_text()[-2000:]
    store.engine.dispose()
    assert_nothing_lost_nothing_doubled(store, harness_ids)


def test_a_ray_actor_killed_mid_harness_loses_only_that_harness_which_runs_again(
        store: Store, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    from agent.campaign.executors import RayExecutor

    harness_ids = _harnesses(store, 2)
    executors: list[RayExecutor] = []

    def make(*args, **kwargs):  # type: ignore[no-untyped-def]
        executors.append(RayExecutor(*args, preload_opinfo=False, **kwargs))
        return executors[-1]

    def kill_the_first_actor() -> None:
        _wait_for(lambda: executors and executors[0]._actors, 60)
        pid = executors[0].actor_pids()[0]  # answers once the actor is up, i.e. about to run its harness
        time.sleep(2.0)
        os.kill(pid, signal.SIGKILL)

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        killer = threading.Thread(target=kill_the_first_actor, daemon=True)
        killer.start()
        # Each harness runs its 4 s (the kill lands inside the first); the campaign's budget is only a cap far
        # above the work, so that it completes does not depend on how fast a busy machine restarts the actor.
        config = CampaignConfig(budget_s=900, workers=1, scheduler="even", min_inputs=1, min_harness_budget_s=1,
                                max_harness_budget_s=4, workdir=str(tmp_path), executor="ray")
        summary = run_campaign(store, config, pool_factory=make)
        killer.join(timeout=5)
    finally:
        ray.shutdown()
    assert executors[0].replaced >= 1 and summary.exit_reason == "completed"
    assert_nothing_lost_nothing_doubled(store, harness_ids)
    with store.session() as session:
        lost = [f for f in session.query(models.Finding) if f.evidence.get("ray_actors_lost")]
        assert len(lost) == 1 and lost[0].verdict == "passed"  # the lost harness ran again to its own verdict
