"""Where a campaign's harnesses run: the local sandboxed pool, or Ray actors that each hold one warm sandboxed worker.

Both executors speak the WorkerPool protocol the campaign already uses: built as
`factory(n_workers, task_timeout_s=..., memory_limit_mb=..., workdir=..., sandbox=..., instrument=...)`,
used as a context manager, `submit(spec, budget_s=...)` returns a `concurrent.futures.Future` of a
HarnessResult, and `close()` lets go of the workers. The driver keeps the scheduling and the database; an
executor only runs one spec at a time per worker and hands back its result.

Note [Ray retries]
Ray re-runs a task whose worker died (DEFAULT_TASK_MAX_RETRIES = 3) and can restart dead actors. Neither is
wanted here: a harness that crashes is already contained inside the actor's sandboxed worker (it becomes a
`crash` verdict), so a dead *actor* means the node or the actor process went away. Every actor is made with
`max_restarts=0, max_task_retries=0`, and this module retries the lost in-flight harness itself, once per
attempt on a fresh actor, up to `max_attempts`. The campaign commits the one result it gets back, so a retry
can never produce a second verdict row (the database's uniqueness constraint proves it: see
db/queries/campaign.py, Note [One verdict per claim]).

Note [Actors that can be placed]
An actor call waits, silently and without limit, for its actor to be placed on a node with the resources it
asked for. A campaign once hung for 13 minutes on it: a `device:cuda` harness asked for an actor with
`num_gpus=1` on a cluster without a GPU (and each slot kept a CPU actor *and* a GPU actor, each holding a CPU
for life, so even with a GPU the second one could never be placed on two cores). The call was queued behind an
actor that would never exist, the driver waited in `ray.get` for task timeout + 600 s + budget, and both
live actors sat idle. So: a slot holds one actor at a time (switching kind kills the old one first, freeing its
CPU); a GPU is asked for only where the cluster has one (elsewhere the harness runs on a CPU actor and says
CUDA is not available, as on the local pool), and a share of it, so every slot's GPU actor fits; a Ray
instance this executor starts itself has a CPU per slot; a new actor must answer within `start_timeout_s`
(else an `error` verdict naming the resources it asked for); and a running harness is waited for only as long
as the actor's own pool waits for it (budget + task timeout + the minimiser's time + a little slack).
"""

from __future__ import annotations

import math
import os
import queue
import threading
from concurrent.futures import Future
from functools import partial
from pathlib import Path
from typing import Any, Callable, Protocol

from fuzz_core.result import ERROR, HarnessResult
from fuzz_core.spec import HarnessSpec

EXECUTORS = ("local", "ray")
# The actor's pool answers within budget + task timeout (+ the minimiser's time on a confirmed finding): past that
# (and this slack) the actor itself is stuck. Note [Actors that can be placed]
RAY_ANSWER_SLACK_S = 30.0
RAY_START_TIMEOUT_S = 300.0  # a new actor imports torch and starts its sandboxed worker


class Executor(Protocol):
    def submit(self, spec: HarnessSpec, budget_s: float | None = None,
               max_executions: int | None = None) -> Future[HarnessResult]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: Any) -> None: ...


class ExecutorUnavailable(RuntimeError):
    """The chosen executor cannot run here (Ray not installed, or no cluster at the address)."""


def needs_gpu(spec: HarnessSpec) -> bool:
    """A harness whose modes run on CUDA must land where a GPU is."""
    return any("cuda" in mode for mode in (spec.reference_mode, spec.test_mode))


def executor_factory(kind: str, *, ray_address: str | None = None, **options: Any) -> Callable[..., Executor]:
    """The pool factory for `--executor`; `options` go to every pool (e.g. preload_opinfo=False in tests)."""
    if kind == "local":
        from fuzz_core.workers import WorkerPool

        return partial(WorkerPool, **options)
    if kind == "ray":
        return partial(RayExecutor, address=ray_address, **options)
    raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}")


class SandboxedWorkerActor:
    """A Ray actor holding one warm sandboxed worker (a WorkerPool of one).

    Made with max_concurrency=2, so `pid()` answers while `run` is busy (the executor sends one `run` at a time)."""

    def __init__(self, pool_options: dict[str, Any]) -> None:
        from fuzz_core.workers import WorkerPool

        self.pool = WorkerPool(1, **pool_options)
        self.pool.__enter__()
        self.pool.warm()

    def run(self, spec: dict[str, Any], budget_s: float | None, max_executions: int | None = None) -> dict[str, Any]:
        return self.pool.submit(HarnessSpec.from_dict(spec), budget_s=budget_s,
                                max_executions=max_executions).result().to_dict()

    def pid(self) -> int:
        return os.getpid()


class RayExecutor:
    """`n_workers` slots; each keeps one actor (made on first use, remade when it dies) and runs one spec at a time."""

    def __init__(self, n_workers: int = 2, task_timeout_s: float = 120.0, memory_limit_mb: int | None = 8192, *,
                 address: str | None = None, workdir: str | os.PathLike[str] | None = None, sandbox: bool = True,
                 instrument: str = "op", preload_opinfo: bool = True, max_attempts: int = 2,
                 num_cpus: float = 1.0, num_gpus: float = 1.0, start_timeout_s: float = RAY_START_TIMEOUT_S,
                 **pool_options: Any) -> None:
        try:
            import ray
        except ImportError:
            raise ExecutorUnavailable("--executor ray needs Ray: pip install 'transfuzz[ray]'") from None
        if n_workers < 1:
            raise ValueError("n_workers must be at least 1")
        self._ray = ray
        self.address = address
        self.n_workers = n_workers
        self.max_attempts = max(1, max_attempts)
        self.num_cpus = num_cpus
        self.num_gpus = num_gpus
        from fuzz_core.workers import MINIMISE_S

        minimise_s = pool_options.get("minimise_s", MINIMISE_S) or 0.0
        self.answer_timeout_s = task_timeout_s + minimise_s + RAY_ANSWER_SLACK_S
        self.start_timeout_s = start_timeout_s
        self.workdir = Path(workdir).resolve() if workdir is not None else None
        self.pool_options = {"task_timeout_s": task_timeout_s, "memory_limit_mb": memory_limit_mb,
                             "sandbox": sandbox, "instrument": instrument, "preload_opinfo": preload_opinfo,
                             **pool_options}
        self._tasks: queue.Queue[tuple[HarnessSpec, float | None, int | None, Future[HarnessResult]] | None] = (
            queue.Queue())
        self._threads: list[threading.Thread] = []
        self._actors: dict[int, tuple[bool, Any]] = {}  # slot -> (gpu?, its one live actor handle)
        self._gpu_share = 0.0  # the GPU each GPU actor asks for; 0: the cluster has none
        self._lock = threading.Lock()
        self._started_ray = False
        self.replaced = 0  # actors that died and were replaced

    def __enter__(self) -> RayExecutor:
        if not self._ray.is_initialized():
            options: dict[str, Any] = {}
            if self.address is None and not os.environ.get("RAY_ADDRESS"):
                # A new local instance: a CPU for every slot, or the last slots' actors could never be placed.
                options["num_cpus"] = max(os.cpu_count() or 1, math.ceil(self.n_workers * self.num_cpus))
            try:
                self._ray.init(address=self.address, include_dashboard=False, log_to_driver=False,
                               configure_logging=False, **options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ExecutorUnavailable(f"cannot reach a Ray cluster at {self.address or 'a new local instance'}: "
                                          f"{exc}") from None
            self._started_ray = True
        gpus = float(self._ray.cluster_resources().get("GPU", 0.0))
        self._gpu_share = min(self.num_gpus, gpus / self.n_workers) if gpus > 0 else 0.0
        for slot in range(self.n_workers):
            thread = threading.Thread(target=self._serve, args=(slot,), daemon=True, name=f"tf-ray-slot-{slot}")
            thread.start()
            self._threads.append(thread)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def submit(self, spec: HarnessSpec, budget_s: float | None = None,
               max_executions: int | None = None) -> Future[HarnessResult]:
        future: Future[HarnessResult] = Future()
        self._tasks.put((spec, budget_s, max_executions, future))
        return future

    def close(self) -> None:
        for _ in self._threads:
            self._tasks.put(None)
        for thread in self._threads:
            thread.join(timeout=10)
        self._threads.clear()
        with self._lock:
            actors, self._actors = [actor for _gpu, actor in self._actors.values()], {}
        for actor in actors:
            self._ray.kill(actor, no_restart=True)
        if self._started_ray:
            self._ray.shutdown()
            self._started_ray = False

    def actor_pids(self) -> list[int]:
        """Process ids of the live actors (fault tests kill one mid-harness)."""
        with self._lock:
            actors = [actor for _gpu, actor in self._actors.values()]
        return [self._ray.get(actor.pid.remote(), timeout=self.start_timeout_s) for actor in actors]

    # -- per-slot service thread ----------------------------------------------------------------
    def _actor(self, slot: int, gpu: bool) -> tuple[Any, bool]:
        """(the slot's actor of this kind, whether it is new); one of the other kind is killed first, so a
        slot never holds more than one actor's resources (Note [Actors that can be placed])."""
        with self._lock:
            held = self._actors.get(slot)
            if held is not None and held[0] == gpu:
                return held[1], False
            if held is not None:
                del self._actors[slot]
                self._ray.kill(held[1], no_restart=True)
            options = dict(self.pool_options)
            if self.workdir is not None:
                options["workdir"] = str(self.workdir / f"ray_slot{slot}_{self.replaced}")
            remote = self._ray.remote(SandboxedWorkerActor).options(  # Note [Ray retries]
                num_cpus=self.num_cpus, num_gpus=self._gpu_share if gpu else 0, max_restarts=0, max_task_retries=0,
                max_concurrency=2)
            actor = remote.remote(options)
            self._actors[slot] = (gpu, actor)
            return actor, True

    def _forget(self, slot: int, actor: Any) -> None:
        with self._lock:
            if self._actors.get(slot, (None, None))[1] is actor:
                del self._actors[slot]
            self.replaced += 1
        self._ray.kill(actor, no_restart=True)

    def _serve(self, slot: int) -> None:
        while True:
            item = self._tasks.get()
            if item is None:
                return
            spec, budget_s, max_executions, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(self._run(slot, spec, budget_s, max_executions))
            except Exception as exc:  # executor machinery failed: an `error` verdict, never a lost task
                future.set_result(HarnessResult(ERROR, f"ray executor failure: {type(exc).__name__}: {exc}",
                                                spec_id=spec.spec_id))

    def _run(self, slot: int, spec: HarnessSpec, budget_s: float | None,
             max_executions: int | None = None) -> HarnessResult:
        """Run on this slot's actor; an actor that dies loses only this harness, which runs again on a fresh one.
        Every wait is bounded (Note [Actors that can be placed]): an actor that cannot start, or that stops
        answering, is an `error` verdict and is not tried again."""
        exceptions = self._ray.exceptions
        gpu = needs_gpu(spec) and self._gpu_share > 0  # no GPU in the cluster: the harness says so itself
        answer_timeout = self.answer_timeout_s + (budget_s if budget_s is not None else spec.budget_s)
        lost: list[str] = []
        for _attempt in range(self.max_attempts):
            actor, new = self._actor(slot, gpu)
            try:
                if new:
                    try:
                        self._ray.get(actor.pid.remote(), timeout=self.start_timeout_s)
                    except exceptions.GetTimeoutError:
                        self._forget(slot, actor)
                        return self._failed(spec, lost, f"no Ray node started an actor with {self.num_cpus:g} CPU"
                                            f"{f' and {self._gpu_share:g} GPU' if gpu else ''} within "
                                            f"{self.start_timeout_s:.0f} s")
                answer = self._ray.get(actor.run.remote(spec.to_dict(), budget_s, max_executions), timeout=answer_timeout)
                result = HarnessResult.from_dict(answer)
                if lost:
                    result.evidence["ray_actors_lost"] = lost
                return result
            except exceptions.RayActorError as exc:
                lost.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
                self._forget(slot, actor)
            except exceptions.GetTimeoutError:
                self._forget(slot, actor)
                return self._failed(spec, lost, f"the actor gave no answer within {answer_timeout:.0f} s")
        return self._failed(spec, lost, f"ray actor lost {len(lost)} times running this harness: {lost[-1]}")

    @staticmethod
    def _failed(spec: HarnessSpec, lost: list[str], reason: str) -> HarnessResult:
        return HarnessResult(ERROR, reason, evidence={"ray_actors_lost": lost} if lost else {}, spec_id=spec.spec_id)
