"""Run pending harnesses under one shared budget; every harness's result is committed once it is decided.

The budget is shared by a scheduler (agent/campaign/schedule.py): `halving` (default) probes every
harness briefly and gives the rest of the time, round by round, to the half with the most signal;
`even` gives every harness the same share in one round (the old rule). Agreement on fewer than
`min_inputs` compared inputs (both modes ran and were compared, over all rounds) is stored as `inconclusive`
and left pending for the next campaign. `max_executions` bounds a harness's work (inputs over all its rounds):
a campaign whose harnesses all reach it ends before its time budget, which stays a cap.
The budget decides which harnesses start, never whether the campaign makes progress: the first harness of every
worker starts whatever the clock says (starting a Ray instance may take longer than a short budget; the local
pool's first tasks are queued before its workers start), with the shortest share, so each campaign decides work.
A killed campaign loses at most the harnesses still in play: they stay `running` with a claim time and
the next campaign hands them back once that run's heartbeat has gone stale.
"""

from __future__ import annotations

import hashlib
import math
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

from agent.campaign.schedule import SCHEDULERS, TaskState, aggregate, halving_keep, rounds_left
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
    scheduler: str = "halving"  # "halving" (probe, then successive halving by signal) or "even"
    min_inputs: int = 50  # agreement on fewer compared inputs is `inconclusive`
    instrument: str = "op"  # none | module | op | kernel, for every worker
    probe_fraction: float = 0.3  # halving: share of the budget spent on the first probe of every harness
    executor: str = "local"  # local (process pool) | ray (actors, each one warm sandboxed worker)
    ray_address: str | None = None  # ray: "auto", "ray://host:10001", or None for a new local instance
    max_executions: int | None = None  # inputs per harness over all its rounds; None: the time budget alone

    def validate(self) -> None:
        if self.budget_s <= 0:
            raise ValueError("budget must be positive")
        if self.workers < 1:
            raise ValueError("workers must be at least 1")
        if not 0 < self.sampling <= 1:
            raise ValueError("sampling must be in (0, 1]")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}")
        if self.scheduler not in SCHEDULERS:
            raise ValueError(f"scheduler must be one of {', '.join(SCHEDULERS)}")
        if self.min_inputs < 1:
            raise ValueError("min_inputs must be at least 1")
        if self.max_executions is not None and self.max_executions < 1:
            raise ValueError("max_executions must be at least 1")
        from fuzz_core.instrument.levels import LEVELS

        if self.instrument not in LEVELS:
            raise ValueError(f"instrument must be one of {', '.join(LEVELS)}")
        if not 0 < self.probe_fraction <= 1:
            raise ValueError("probe_fraction must be in (0, 1]")
        from agent.campaign.executors import EXECUTORS

        if self.executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}")


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
    scheduler: str = ""
    rounds: int = 0

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


def harness_budget(config: CampaignConfig, n_tasks: int, share: float = 1.0) -> float:
    """Fair share of `share` of the campaign budget per task, given the workers running side by side."""
    fair = config.budget_s * share * config.workers / max(n_tasks, 1)
    return max(config.min_harness_budget_s, min(config.max_harness_budget_s, fair))


ResultCallback = Callable[[int, Any], None]
# A database that blinks (a PostgreSQL restart) is waited for: ~30 s over 7 tries, then the error stands.
db_retry = retry(stop=stop_after_attempt(7), wait=wait_exponential(multiplier=0.5, max=10),
                 retry=retry_if_exception_type(OperationalError), reraise=True)
PROBE_FLOOR_S = 0.5


def run_campaign(store: Store, config: CampaignConfig, *, on_result: ResultCallback | None = None,
                 pool_factory: Callable[..., Any] | None = None) -> CampaignSummary:
    from agent.campaign.executors import executor_factory
    from fuzz_core import HarnessResult, HarnessSpec
    from fuzz_core.spec import SpecError

    config.validate()
    started = time.monotonic()
    deadline = started + config.budget_s
    with store.session() as session:
        q.refuse_second_driver(session, timedelta(seconds=config.stale_after_s))
        run_id = q.start_run(session, "fuzz", asdict(config))
        reclaimed = q.reclaim_stale(session, timedelta(seconds=config.stale_after_s))
        pending = [(hid, spec) for hid, spec in q.pending_harnesses(session) if sampled(hid, config.seed, config.sampling)]
    states = [TaskState(hid, variant) for hid, spec in pending for variant in with_precision(spec, config.precision)]
    summary = CampaignSummary(run_id=run_id, exit_reason="completed", reclaimed=reclaimed, scheduler=config.scheduler)
    counters: Counter = Counter()
    remaining_variants = Counter(state.hid for state in states)

    @db_retry
    def commit_result(hid: int, result: Any, variant: str) -> Counter:
        """Commit one result with the run's counters; a database that blinks is retried (Note [One verdict per
        claim] makes the retry safe). A result whose claim another driver took over is dropped: that driver
        runs it."""
        step = Counter({f"verdict:{result.verdict}": 1, "executions": int(result.executions), "tasks": 1})
        with store.session() as session:
            if q.record_result(session, hid, run_id, verdict=result.verdict, reason=result.reason,
                               evidence=result.evidence, repro=result.repro, signature=result.signature,
                               variant=variant) is None:
                step = Counter({"claims_lost": 1})
            q.save_counters(session, run_id, dict(counters + step))
        return step

    def persist(hid: int, result: Any, variant: str) -> None:
        """Store one result, then tell the caller. A database that stays away stops the campaign with the
        harness still claimed, so the next campaign runs it again. The caller's hook is retried on its own: a
        retry of the commit after it succeeded would find its row and count the task a second time."""
        step = commit_result(hid, result, variant)
        counters.update(step)  # only once committed, so a retried write never counts twice
        if "claims_lost" in step:
            return
        summary.verdicts[result.verdict] += 1
        summary.executions += int(result.executions)
        if on_result is not None:
            db_retry(on_result)(hid, result)

    @db_retry
    def claim(hid: int) -> bool:
        with store.session() as session:
            return q.claim(session, hid, run_id)

    def finish(state: TaskState) -> None:
        """Store the task's one result (its strongest verdict over all rounds)."""
        if state.done or not state.results:
            return
        state.done = True
        persist(state.hid, aggregate(state, config.min_inputs, HarnessResult), q.variant_key(state.spec))
        remaining_variants[state.hid] -= 1

    make_pool = pool_factory or executor_factory(config.executor, ray_address=config.ray_address)
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
    in_flight: dict[Future, TaskState] = {}
    claimed: set[int] = set()
    started_tasks = 0  # tasks handed to the executor: the first `workers` start whatever the clock says

    def executions_left(state: TaskState) -> int | None:
        return None if config.max_executions is None else max(config.max_executions - state.executions, 0)

    def spent(state: TaskState) -> bool:
        """No more rounds for this task: its verdict cannot change, or it ran all the inputs it may."""
        return state.is_final() or executions_left(state) == 0

    def run_round(queue: list[TaskState], budget_for: Callable[[int], float]) -> None:
        """Run each task once with the budget `budget_for(tasks not yet started)` gives at its start; stop at
        the deadline."""
        nonlocal started_tasks
        queue = list(queue)
        while queue or in_flight:
            while queue and len(in_flight) < config.workers:
                budget = budget_for(len(queue))
                if (started_tasks >= config.workers
                        and time.monotonic() + min(budget, config.min_harness_budget_s) > deadline):
                    summary.exit_reason = "budget"
                    queue.clear()
                    break
                state = queue.pop(0)
                if state.hid not in claimed:
                    if not claim(state.hid):
                        state.done = True  # another campaign has it
                        continue
                    claimed.add(state.hid)
                left = max(config.min_harness_budget_s, min(budget, deadline - time.monotonic()))
                try:
                    if state.spec.get("input_source") == "code" or state.spec.get("code"):
                        # Note [No stored code]: the pipeline stores data-only specs (inputs from OpInfo,
                        # signatures or a typed description). Code in a database row was put there by
                        # someone else, so it is refused; trusted callers run code specs in-process.
                        raise SpecError("stored specs never carry code; input_source 'code' is refused here")
                    # A later round continues with fresh mutations: the spec's seed moves on by round.
                    spec = HarnessSpec.from_dict({**state.spec, "budget_s": left,
                                                  "seed": int(state.spec.get("seed", 0)) + 1009 * state.rounds})
                except (SpecError, TypeError) as exc:  # a stored spec the engine cannot rebuild: a tool bug
                    state.results.append(HarnessResult(verdict="error", reason=f"harness spec does not load: {exc}"))
                    finish(state)
                    continue
                in_flight[pool.submit(spec, budget_s=left, max_executions=executions_left(state))] = state
                started_tasks += 1
            if not in_flight:
                continue
            done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
            for future in done:
                state = in_flight.pop(future)
                try:
                    result = future.result()
                except Exception as exc:  # the pool itself failed on this task: record it as a tool error
                    result = HarnessResult(verdict="error", reason=f"worker pool failure: {type(exc).__name__}: {exc}")
                state.results.append(result)
                if config.scheduler == "even" or spent(state):
                    finish(state)

    try:
        with make_pool(config.workers, task_timeout_s=config.task_timeout_grace_s,
                       memory_limit_mb=config.memory_limit_mb, workdir=config.workdir, sandbox=config.sandbox,
                       instrument=config.instrument, min_inputs=config.min_inputs) as pool:
            if config.scheduler == "even":
                per_task = harness_budget(config, len(states))

                def even_budget(waiting: int) -> float:
                    # The fair share, shrunk to what is left for the tasks not yet started: worker start-up and
                    # a database that blinked must not push the last harnesses out of the campaign.
                    left = max(deadline - time.monotonic(), 0.0) * config.workers / max(waiting, 1)
                    return max(config.min_harness_budget_s, min(per_task, left))

                run_round(states, even_budget)
                summary.rounds = 1
            else:
                # The probe may be shorter than min_harness_budget_s: it only has to show some signal.
                probe = max(PROBE_FLOOR_S, min(config.max_harness_budget_s, config.budget_s * config.probe_fraction
                                               * config.workers / max(len(states), 1)))
                run_round(states, lambda _waiting: probe)
                summary.rounds = 1
                while True:
                    candidates = [s for s in states if s.results and not s.done and not spent(s)]
                    time_left = deadline - time.monotonic()
                    if not candidates or time_left < config.min_harness_budget_s:
                        break
                    share = time_left / rounds_left(math.ceil(len(candidates) / 2))
                    # Budget-constrained halving: keep half, and no more than this round can give a useful run.
                    fits = max(1, int(share * config.workers // config.min_harness_budget_s))
                    kept, dropped = halving_keep(candidates, config.min_inputs, most=fits)
                    for state in dropped:
                        finish(state)
                    round_end = time.monotonic() + share

                    def next_budget(waiting: int, end: float = round_end) -> float:
                        fair = max(end - time.monotonic(), 0.0) * config.workers / max(waiting, 1)
                        return max(config.min_harness_budget_s, min(config.max_harness_budget_s, fair))

                    run_round(kept, next_budget)
                    summary.rounds += 1
            for state in states:
                finish(state)
    except KeyboardInterrupt:
        summary.exit_reason = "interrupted"
        raise
    finally:
        beating.set()
        heart.join(timeout=5)
        busy = {s.hid for s in in_flight.values()}
        unfinished = [hid for hid in claimed if remaining_variants[hid] > 0 and hid not in busy]
        with store.session() as session:
            for hid in unfinished:
                q.release(session, hid)
            summary.left_pending = len(q.pending_harnesses(session))
            summary.harnesses = len({hid for hid in claimed})
            summary.elapsed_s = round(time.monotonic() - started, 2)
            counters["left_pending"] = summary.left_pending
            counters["rounds"] = summary.rounds
            q.finish_run(session, run_id, summary.exit_reason, dict(counters))
    return summary
