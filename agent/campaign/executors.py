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
"""

from __future__ import annotations

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
RAY_ANSWER_SLACK_S = 600.0  # the actor's pool has its own timeouts; this only catches an actor that is stuck


class Executor(Protocol):
    def submit(self, spec: HarnessSpec, budget_s: float | None = None) -> Future[HarnessResult]: ...

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
    """A Ray actor holding one warm sandboxed worker (a WorkerPool of one)."""

    def __init__(self, pool_options: dict[str, Any]) -> None:
        from fuzz_core.workers import WorkerPool

        self.pool = WorkerPool(1, **pool_options)
        self.pool.__enter__()
        self.pool.warm()

    def run(self, spec: dict[str, Any], budget_s: float | None) -> dict[str, Any]:
        return self.pool.submit(HarnessSpec.from_dict(spec), budget_s=budget_s).result().to_dict()

    def pid(self) -> int:
        return os.getpid()


class RayExecutor:
    """`n_workers` slots; each keeps one actor (made on first use, remade when it dies) and runs one spec at a time."""

    def __init__(self, n_workers: int = 2, task_timeout_s: float = 120.0, memory_limit_mb: int | None = 8192, *,
                 address: str | None = None, workdir: str | os.PathLike[str] | None = None, sandbox: bool = True,
                 instrument: str = "op", preload_opinfo: bool = True, max_attempts: int = 2,
                 num_cpus: float = 1.0, num_gpus: float = 1.0, **pool_options: Any) -> None:
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
        self.answer_timeout_s = task_timeout_s + RAY_ANSWER_SLACK_S
        self.workdir = Path(workdir).resolve() if workdir is not None else None
        self.pool_options = {"task_timeout_s": task_timeout_s, "memory_limit_mb": memory_limit_mb,
                             "sandbox": sandbox, "instrument": instrument, "preload_opinfo": preload_opinfo,
                             **pool_options}
        self._tasks: queue.Queue[tuple[HarnessSpec, float | None, Future[HarnessResult]] | None] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._actors: dict[tuple[int, bool], Any] = {}  # (slot, gpu?) -> live actor handle
        self._lock = threading.Lock()
        self._started_ray = False
        self.replaced = 0  # actors that died and were replaced

    def __enter__(self) -> RayExecutor:
        if not self._ray.is_initialized():
            try:
                self._ray.init(address=self.address, include_dashboard=False, log_to_driver=False,
                               configure_logging=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ExecutorUnavailable(f"cannot reach a Ray cluster at {self.address or 'a new local instance'}: "
                                          f"{exc}") from None
            self._started_ray = True
        for slot in range(self.n_workers):
            thread = threading.Thread(target=self._serve, args=(slot,), daemon=True, name=f"tf-ray-slot-{slot}")
            thread.start()
            self._threads.append(thread)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def submit(self, spec: HarnessSpec, budget_s: float | None = None) -> Future[HarnessResult]:
        future: Future[HarnessResult] = Future()
        self._tasks.put((spec, budget_s, future))
        return future

    def close(self) -> None:
        for _ in self._threads:
            self._tasks.put(None)
        for thread in self._threads:
            thread.join(timeout=10)
        self._threads.clear()
        with self._lock:
            actors, self._actors = list(self._actors.values()), {}
        for actor in actors:
            self._ray.kill(actor, no_restart=True)
        if self._started_ray:
            self._ray.shutdown()
            self._started_ray = False

    def actor_pids(self) -> list[int]:
        """Process ids of the live actors (fault tests kill one mid-harness)."""
        with self._lock:
            actors = list(self._actors.values())
        return [self._ray.get(actor.pid.remote(), timeout=60) for actor in actors]

    # -- per-slot service thread ----------------------------------------------------------------
    def _actor(self, slot: int, gpu: bool) -> Any:
        with self._lock:
            actor = self._actors.get((slot, gpu))
            if actor is None:
                options = dict(self.pool_options)
                if self.workdir is not None:
                    options["workdir"] = str(self.workdir / f"ray_slot{slot}_{self.replaced}")
                remote = self._ray.remote(SandboxedWorkerActor).options(  # Note [Ray retries]
                    num_cpus=self.num_cpus, num_gpus=self.num_gpus if gpu else 0, max_restarts=0, max_task_retries=0)
                actor = remote.remote(options)
                self._actors[(slot, gpu)] = actor
            return actor

    def _forget(self, slot: int, gpu: bool) -> None:
        with self._lock:
            actor = self._actors.pop((slot, gpu), None)
            self.replaced += 1
        if actor is not None:
            self._ray.kill(actor, no_restart=True)

    def _serve(self, slot: int) -> None:
        while True:
            item = self._tasks.get()
            if item is None:
                return
            spec, budget_s, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(self._run(slot, spec, budget_s))
            except Exception as exc:  # executor machinery failed: an `error` verdict, never a lost task
                future.set_result(HarnessResult(ERROR, f"ray executor failure: {type(exc).__name__}: {exc}",
                                                spec_id=spec.spec_id))

    def _run(self, slot: int, spec: HarnessSpec, budget_s: float | None) -> HarnessResult:
        """Run on this slot's actor; an actor that dies loses only this harness, which runs again on a fresh one."""
        exceptions = self._ray.exceptions
        gpu = needs_gpu(spec)
        lost: list[str] = []
        for _attempt in range(self.max_attempts):
            actor = self._actor(slot, gpu)
            try:
                answer = self._ray.get(actor.run.remote(spec.to_dict(), budget_s),
                                       timeout=self.answer_timeout_s + (budget_s or 0.0))
                result = HarnessResult.from_dict(answer)
                if lost:
                    result.evidence["ray_actors_lost"] = lost
                return result
            except exceptions.RayActorError as exc:
                lost.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
                self._forget(slot, gpu)
            except exceptions.GetTimeoutError:
                lost.append(f"no answer within {self.answer_timeout_s + (budget_s or 0.0):.0f} s")
                self._forget(slot, gpu)
        return HarnessResult(ERROR, f"ray actor lost {len(lost)} times running this harness: {lost[-1]}",
                             evidence={"ray_actors_lost": lost}, spec_id=spec.spec_id)
