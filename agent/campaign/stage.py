"""Run pending harnesses under one shared budget; every result is committed the moment it arrives.

A killed campaign loses at most the harnesses in flight: they stay `running` with a claim time and
the next campaign hands them back once that run's heartbeat has gone stale.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy.exc import OperationalError
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from agent.harness.generate import PRECISIONS, with_precision
from db.queries import campaign as q
from db.store import Store


@dataclass
class CampaignConfig:
    budget_s: float = 600.0
    workers: int = 2
    sampling: float = 1.0
    precision: str = "full"
    seed: int = 0
    min_harness_budget_s: float = 2.0
    max_harness_budget_s: float = 120.0
    task_timeout_grace_s: float = 60.0
    memory_limit_mb: int = 4096
    stale_after_s: float = 60.0  # a run whose heartbeat is older than this is dead
    heartbeat_s: float = 10.0
    workdir: str | None = None  # where workers keep saved inputs; None = a temporary folder
    sandbox: bool = True  # workers inside bubblewrap; False only for trusted local input (--no-sandbox)

    def validate(self) -> None:
        if self.budget_s <= 0:
            raise ValueError("budget must be positive")
        if self.workers < 1:
            raise ValueError("workers must be at least 1")
        if not 0 < self.sampling <= 1:
            raise ValueError("sampling must be in (0, 1]")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}")


@dataclass
class CampaignSummary:
    run_id: int
    exit_reason: str
    harnesses: int = 0
    executions: int = 0
    reclaimed: int = 0
    left_pending: int = 0
    verdicts: Counter = field(default_factory=Counter)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["verdicts"] = dict(self.verdicts)
        return data


def sampled(harness_id: int, seed: int, fraction: float) -> bool:
    """Deterministic sampling: the same harnesses are chosen for the same seed."""
    if fraction >= 1:
        return True
    digest = hashlib.sha256(f"{seed}:{harness_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def harness_budget(config: CampaignConfig, n_tasks: int) -> float:
    """Fair share of the campaign budget per task, given the workers running side by side."""
    share = config.budget_s * config.workers / max(n_tasks, 1)
    return max(config.min_harness_budget_s, min(config.max_harness_budget_s, share))


ResultCallback = Callable[[int, Any], None]


def run_campaign(store: Store, config: CampaignConfig, *, on_result: ResultCallback | None = None,
                 pool_factory: Callable[..., Any] | None = None) -> CampaignSummary:
    from fuzz_core import HarnessResult, HarnessSpec, WorkerPool
    from fuzz_core.spec import SpecError

    config.validate()
    started = time.monotonic()
    deadline = started + config.budget_s
    with store.session() as session:
        run_id = q.start_run(session, "fuzz", asdict(config))
        reclaimed = q.reclaim_stale(session, timedelta(seconds=config.stale_after_s))
        pending = [(hid, spec) for hid, spec in q.pending_harnesses(session) if sampled(hid, config.seed, config.sampling)]
    tasks = [(hid, variant) for hid, spec in pending for variant in with_precision(spec, config.precision)]
    per_task = harness_budget(config, len(tasks))
    summary = CampaignSummary(run_id=run_id, exit_reason="completed", reclaimed=reclaimed)
    counters: Counter = Counter()
    remaining_variants = Counter(hid for hid, _ in tasks)

    @retry(stop=stop_after_attempt(5), wait=wait_exponential(multiplier=0.5, max=10),
           retry=retry_if_exception_type(OperationalError), reraise=True)
    def persist(hid: int, result: Any) -> None:
        """Commit one result; a database that blinks is retried, one that stays away stops the
        campaign with the harness still claimed, so the next campaign runs it again."""
        with store.session() as session:
            q.record_result(session, hid, run_id, verdict=result.verdict, reason=result.reason,
                            evidence=result.evidence, repro=result.repro, signature=result.signature)
            counters[f"verdict:{result.verdict}"] += 1
            counters["executions"] += int(result.executions)
            counters["tasks"] += 1
            q.save_counters(session, run_id, dict(counters))
        summary.verdicts[result.verdict] += 1
        summary.executions += int(result.executions)
        if on_result is not None:
            on_result(hid, result)

    make_pool = pool_factory or WorkerPool
    beating = threading.Event()

    def beat() -> None:
        while not beating.wait(config.heartbeat_s):
            try:
                with store.session() as session:
                    q.heartbeat(session, run_id)
            except Exception:  # a database hiccup must not kill the campaign; the next beat retries
                pass

    heart = threading.Thread(target=beat, daemon=True, name="tf-heartbeat")
    heart.start()
    in_flight: dict[Future, int] = {}
    queue = list(tasks)
    claimed: set[int] = set()
    try:
        with make_pool(config.workers, task_timeout_s=per_task + config.task_timeout_grace_s,
                       memory_limit_mb=config.memory_limit_mb, workdir=config.workdir, sandbox=config.sandbox) as pool:
            while queue or in_flight:
                while queue and len(in_flight) < config.workers:
                    if time.monotonic() + min(per_task, config.min_harness_budget_s) > deadline:
                        summary.exit_reason = "budget"
                        queue.clear()
                        break
                    hid, spec_dict = queue.pop(0)
                    if hid not in claimed:
                        with store.session() as session:
                            if not q.claim(session, hid, run_id):
                                continue  # another campaign has it
                        claimed.add(hid)
                    left = max(config.min_harness_budget_s, min(per_task, deadline - time.monotonic()))
                    try:
                        if spec_dict.get("input_source") == "code" or spec_dict.get("code"):
                            # Note [No stored code]: the pipeline stores data-only specs (inputs from OpInfo,
                            # signatures or a typed description). Code in a database row was put there by
                            # someone else, so it is refused; trusted callers run code specs in-process.
                            raise SpecError("stored specs never carry code; input_source 'code' is refused here")
                        spec = HarnessSpec.from_dict({**spec_dict, "budget_s": left})
                    except (SpecError, TypeError) as exc:  # a stored spec the engine cannot rebuild: a tool bug
                        persist(hid, HarnessResult(verdict="error", reason=f"harness spec does not load: {exc}"))
                        remaining_variants[hid] -= 1
                        continue
                    in_flight[pool.submit(spec, budget_s=left)] = hid
                if not in_flight:
                    continue
                done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
                for future in done:
                    hid = in_flight.pop(future)
                    try:
                        result = future.result()
                    except Exception as exc:  # the pool itself failed on this task: record it as a tool error
                        result = HarnessResult(verdict="error", reason=f"worker pool failure: {type(exc).__name__}: {exc}")
                    persist(hid, result)
                    remaining_variants[hid] -= 1
    except KeyboardInterrupt:
        summary.exit_reason = "interrupted"
        raise
    finally:
        beating.set()
        heart.join(timeout=5)
        unfinished = [hid for hid in claimed if remaining_variants[hid] > 0 and hid not in in_flight.values()]
        with store.session() as session:
            for hid in unfinished:
                q.release(session, hid)
            summary.left_pending = len(q.pending_harnesses(session))
            summary.harnesses = len({hid for hid in claimed})
            summary.elapsed_s = round(time.monotonic() - started, 2)
            counters["left_pending"] = summary.left_pending
            q.finish_run(session, run_id, summary.exit_reason, dict(counters))
    return summary
