"""A pool of sandboxed worker processes that run harness specs; crashes and hangs become verdicts.

Each worker is a long-lived Python inside bubblewrap (fuzz_core.sandbox) that sees one private writable
folder (its tasks' workdirs) and the pool's private compile cache; its HOME and TMPDIR are capped tmpfs
inside the sandbox. Its log and its progress file stay outside that folder; the progress file reaches it
as an inherited descriptor. The compile cache is made fresh for each pool and deleted when the pool closes,
so nothing one campaign's workers write is run by a later campaign; paths in a worker's answer must lie in
its own folder (fuzz_core/safe_files.py).
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Iterable, Iterator

from fuzz_core import inductor_isa
from fuzz_core import result as V
from fuzz_core.result import HarnessResult
from fuzz_core.safe_files import confine_evidence_paths
from fuzz_core.sandbox import (SANDBOX_HOME, Limits, bwrap_command, gpu_devices, gpu_environment,
                               gpu_library_dirs, python_paths,
                               remove_pids_cgroup, remove_stale_pids_cgroups, require_bwrap, signal_name,
                               worker_environment)
from fuzz_core.spec import HarnessSpec

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT_S = 180.0
REPLAY_TIMEOUT_S = 120.0
MINIMISE_S = 20.0  # default shrink budget per confirmed finding (Note [Shrinking failing inputs])
SHORT_REPRO_TIMEOUT_S = 180.0  # as fuzz_core.minimise_finding; not imported here, that module imports torch
PROGRESS_MAX_BYTES = 4 * 1024 * 1024  # a progress record is a recipe; more is not read


def needs_cuda(spec: HarnessSpec) -> bool:
    """A harness whose modes run on CUDA (`device:cuda`, or a mode or its options naming cuda)."""
    return any("cuda" in mode for mode in (spec.reference_mode, spec.test_mode)) or (
        str(spec.mode_options.get("device", "")).startswith("cuda"))


class WorkerDied(Exception):
    def __init__(self, how: str, detail: str = "") -> None:
        super().__init__(how)
        self.how = how  # "crash" or "hang"
        self.detail = detail


class _Worker:
    """One subprocess; talks JSON lines over pipes; replaced when it dies."""

    def __init__(self, index: int, pool: WorkerPool) -> None:
        self.index = index
        self.pool = pool
        self.proc: subprocess.Popen[str] | None = None
        self.dir = Path(tempfile.mkdtemp(prefix=f"tf_worker{index}_", dir=pool.root))  # 0700, parent only
        self.home = self.dir / "home"  # the one folder the sandboxed worker may write (besides the cache)
        self.progress_path = self.dir / "progress.json"
        self.log_path = self.dir / "worker.log"
        self.started = 0
        self.cpu_s = 0.0
        self.gpu = False  # started with the NVIDIA devices bound (WorkerPool.wants_gpu)

    def task_dir(self, task_id: int, spec_id: str) -> Path:
        return self.home / f"task_{task_id}_{spec_id}"

    def command(self, progress_fd: int) -> tuple[list[str], dict[str, str]]:
        """The argv and environment that start this worker (inside bwrap when the pool is sandboxed)."""
        sandboxed = self.pool.bwrap is not None
        # TMPDIR: inside the sandbox its own /tmp, a tmpfs capped at limits.tmp_mb that vanishes with the worker;
        # without the sandbox a folder in the worker's own folder.
        temp = Path("/tmp") if sandboxed else self.home / "tmp"
        self.home.mkdir(parents=True, exist_ok=True)
        if not sandboxed:
            temp.mkdir(parents=True, exist_ok=True)
        env = worker_environment(os.environ, temp_dir=temp, home=Path(SANDBOX_HOME) if sandboxed else self.home,
                                 package_root=PACKAGE_ROOT, threads=self.pool.threads,
                                 inductor_cache=self.pool.inductor_cache, vec_isa_ok=self.pool.vec_isa_ok)
        if self.gpu:
            env.update(gpu_environment(os.environ))
        command = [sys.executable, "-X", "faulthandler", "-m", "fuzz_core.worker_main", str(progress_fd)] + (
            ["--preload-opinfo"] if self.pool.preload_opinfo else [])
        if not sandboxed:
            return command, env
        assert self.pool.bwrap is not None
        limits = self.pool.limits
        libraries = gpu_library_dirs(env.get("LD_LIBRARY_PATH", ""), never=[PACKAGE_ROOT]) if self.gpu else []
        command = bwrap_command(command, writable=[self.home, self.pool.inductor_cache],
                                readonly=python_paths(PACKAGE_ROOT / "fuzz_core") + libraries, env=env,
                                cwd=self.home, bwrap=self.pool.bwrap, home=SANDBOX_HOME,
                                devices=self.pool.gpu if self.gpu else (), tmp_size_mb=limits.tmp_mb,
                                home_size_mb=limits.home_mb, shm_size_mb=limits.shm_mb)
        return command, {}

    def start(self) -> None:
        self.progress_path.write_text("")
        progress_fd = os.open(self.progress_path, os.O_RDWR)  # read too: the worker maps it (worker_main.ProgressFile)
        try:
            command, env = self.command(progress_fd)
        except BaseException:
            os.close(progress_fd)
            raise
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, cwd=str(self.home),
                env=env, pass_fds=(progress_fd,), preexec_fn=self.pool.worker_limits(self.gpu).apply,
                start_new_session=True,
            )
        finally:
            log.close()
            os.close(progress_fd)
        self.started += 1
        self.cpu_s = 0.0
        ready = self._read(STARTUP_TIMEOUT_S)
        if not ready.get("ready"):
            raise RuntimeError(f"worker {self.index} did not start: {ready}")

    def ended(self, returncode: int) -> str:
        return signal_name(returncode, sandboxed=self.pool.bwrap is not None)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if self.pool.bwrap is not None and self.pool.limits.processes and os.geteuid() == 0:
            remove_pids_cgroup(self.proc.pid)  # the sandbox's pids cgroup (Limits.apply as root)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()  # type: ignore[union-attr]
            except Exception:
                pass
        self.proc = None

    def _read(self, timeout_s: float, minimise_grace: tuple[Any, float] | None = None) -> dict[str, Any]:
        """The next answer; `minimise_grace` = (task id, seconds): once that task's progress says it is
        minimising a confirmed finding, the deadline moves by those seconds (once), so shrinking has its
        time while a harness that hangs is still declared hung after the plain task timeout."""
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 and minimise_grace is not None:
                progress = self.last_progress()
                if progress.get("task") == minimise_grace[0] and progress.get("phase") == "minimise":
                    deadline += minimise_grace[1]
                    timeout_s += minimise_grace[1]
                    minimise_grace = None
                    continue
            if remaining <= 0:
                self.kill()
                raise WorkerDied("hang", f"no answer within {timeout_s:.0f} s")
            ready, _, _ = select.select([self.proc.stdout], [], [], min(remaining, 0.5))
            if ready:
                line = self.proc.stdout.readline()
                if line:
                    return json.loads(line)
                # EOF: the process died.
                rc = self.proc.wait()
                self.proc = None
                raise WorkerDied("crash", self.ended(rc))
            if self.proc.poll() is not None:
                rc = self.proc.returncode
                self.proc = None
                raise WorkerDied("crash", self.ended(rc))

    def call(self, message: dict[str, Any], timeout_s: float,
             minimise_grace: tuple[Any, float] | None = None) -> dict[str, Any]:
        if not self.alive():
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message, default=str) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            rc = self.proc.wait()
            self.proc = None
            raise WorkerDied("crash", self.ended(rc)) from None
        return self._read(timeout_s, minimise_grace)

    def last_progress(self) -> dict[str, Any]:
        """The worker's last progress record: JSON padded with blanks and NULs (worker_main.ProgressFile)."""
        try:
            with open(self.progress_path, "rb") as f:
                data = f.read(PROGRESS_MAX_BYTES).rstrip(b"\0 \n")
            record = json.loads(data) if data else {}
            return record if isinstance(record, dict) else {}
        except (OSError, ValueError):
            return {}

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


class WorkerPool:
    """`with WorkerPool(2, task_timeout_s=60, memory_limit_mb=8192) as pool: pool.submit(spec).result()`."""

    def __init__(self, n_workers: int = 2, task_timeout_s: float = 120.0, memory_limit_mb: int | None = 8192, *,
                 threads: int | None = 1, workdir: str | os.PathLike[str] | None = None,
                 inductor_cache: str | os.PathLike[str] | None = None, preload_opinfo: bool = True,
                 sandbox: bool = True, bwrap: str | None = None, limits: Limits | None = None,
                 minimise_s: float | None = MINIMISE_S, instrument: str = "op", min_inputs: int = 0,
                 cuda: bool | None = None) -> None:
        """`sandbox=False` runs workers without bubblewrap (trusted local use only); with the default the pool
        refuses to start (SandboxUnavailable, saying how to install it) where bwrap is missing or broken.
        `minimise_s`: seconds a worker spends shrinking a confirmed finding's input (None: not minimised).
        `instrument`: the instrumentation level (none|module|op|kernel) every task runs at; `min_inputs`: the
        inputs a pass needs (a task may run briefly past its budget to reach them).
        `cuda`: None (default): a worker gets the NVIDIA device nodes only while it runs a harness that needs
        CUDA (needs_cuda: a cuda mode) and this machine has them; the worker is restarted when that changes.
        True: every worker gets them (code harnesses whose own inputs are on CUDA); an error without a GPU.
        False: never. CUDA reserves far more address space than RLIMIT_AS allows, so a worker with the GPU
        runs without the address-space limit (the others keep it)."""
        if n_workers < 1:
            raise ValueError("n_workers must be at least 1")
        self.bwrap = require_bwrap(bwrap) if sandbox else None
        self.gpu = gpu_devices() if cuda is not False else []
        if cuda and not self.gpu:
            raise ValueError("cuda=True but this machine has no NVIDIA device nodes (/dev/nvidiactl, /dev/nvidia0)")
        self.cuda = cuda
        self.limits = limits if limits is not None else Limits(memory_mb=memory_limit_mb)
        self.n_workers = n_workers
        self.task_timeout_s = task_timeout_s
        self.memory_limit_mb = memory_limit_mb
        self.threads = threads
        self.preload_opinfo = preload_opinfo
        self.minimise_s = minimise_s
        self.instrument = instrument
        self.min_inputs = min_inputs
        self._own_root = workdir is None
        self.root = Path(workdir).resolve() if workdir is not None else Path(tempfile.mkdtemp(prefix="transfuzz_pool_"))
        self.root.mkdir(parents=True, exist_ok=True)
        # Compiled kernels are code that later runs: the cache (inductor's and triton's) is fresh for this pool,
        # mode 0700, and deleted at close(): a kernel one campaign's worker wrote is never run by another.
        self._own_cache = inductor_cache is None
        # Found once per machine, kept in the user's cache folder (Note [The vector ISA check once per machine]).
        self.vec_isa_ok = inductor_isa.vec_isa_ok()
        if inductor_cache is None:
            self.inductor_cache = Path(tempfile.mkdtemp(prefix="compile_cache_", dir=self.root))
        else:
            self.inductor_cache = Path(inductor_cache)
            self.inductor_cache.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.inductor_cache.chmod(0o700)
        self._tasks: queue.Queue[tuple[int, HarnessSpec, float | None, int | None, Future[HarnessResult]] | None] = (
            queue.Queue())
        self._threads: list[threading.Thread] = []
        self._workers: list[_Worker] = []
        self._counter = 0
        self._lock = threading.Lock()
        self.replaced = 0

    def __enter__(self) -> WorkerPool:
        for i in range(self.n_workers):
            worker = _Worker(i, self)
            worker.gpu = bool(self.gpu) and self.cuda is True
            self._workers.append(worker)
            thread = threading.Thread(target=self._serve, args=(worker,), daemon=True, name=f"tf-worker-{i}")
            thread.start()
            self._threads.append(thread)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def warm(self) -> None:
        """Start every worker now (torch imported, OpInfo preloaded), so the first task does not wait for it.
        Call before submitting: a worker's service thread starts it lazily otherwise."""
        for worker in self._workers:
            if not worker.alive():
                worker.start()

    def close(self) -> None:
        for _ in self._threads:
            self._tasks.put(None)
        for thread in self._threads:
            thread.join(timeout=5)
        for worker in self._workers:
            worker.kill()
        self._threads.clear()
        if self._own_cache:
            shutil.rmtree(self.inductor_cache, ignore_errors=True)
        remove_stale_pids_cgroups()

    def submit(self, spec: HarnessSpec, budget_s: float | None = None,
               max_executions: int | None = None) -> Future[HarnessResult]:
        future: Future[HarnessResult] = Future()
        with self._lock:
            self._counter += 1
            task_id = self._counter
        self._tasks.put((task_id, spec, budget_s, max_executions, future))
        return future

    def imap(self, specs: Iterable[HarnessSpec], budget_s: float | None = None,
             max_executions: int | None = None) -> Iterator[HarnessResult]:
        """Results in the order of `specs`, computed by all workers in parallel."""
        futures = [self.submit(s, budget_s, max_executions) for s in specs]
        for future in futures:
            yield future.result()

    # -- per-worker service thread --------------------------------------------------------------
    def _serve(self, worker: _Worker) -> None:
        while True:
            item = self._tasks.get()
            if item is None:
                return
            task_id, spec, budget_s, max_executions, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(self._run_task(worker, task_id, spec, budget_s, max_executions))
            except Exception as exc:  # pool machinery failed: an `error` verdict, never a lost task
                future.set_result(HarnessResult(V.ERROR, f"worker pool failure: {type(exc).__name__}: {exc}",
                                                spec_id=spec.spec_id))

    def wants_gpu(self, spec: HarnessSpec) -> bool:
        """Whether the worker that runs `spec` gets the GPU (see `cuda` in __init__)."""
        return bool(self.gpu) and (self.cuda is True or needs_cuda(spec))

    def worker_limits(self, gpu: bool) -> Limits:
        """The rlimits of a worker: a worker with the GPU has no address-space limit (CUDA reserves more)."""
        return dataclasses.replace(self.limits, memory_mb=None) if gpu else self.limits

    def _run_task(self, worker: _Worker, task_id: int, spec: HarnessSpec, budget_s: float | None,
                  max_executions: int | None) -> HarnessResult:
        gpu = self.wants_gpu(spec)
        if gpu != worker.gpu:  # restarted with (or without) the GPU: devices only where a harness needs them
            worker.kill()
            worker.gpu = gpu
        budget = budget_s if budget_s is not None else spec.budget_s
        workdir = worker.task_dir(task_id, spec.spec_id)
        message = {"op": "run", "id": task_id, "spec": spec.to_dict(), "budget_s": budget,
                   "max_executions": max_executions, "workdir": str(workdir), "minimise_s": self.minimise_s,
                   "instrument": self.instrument, "min_inputs": self.min_inputs}
        # Minimising adds its budget plus up to two runs of the short repro (fuzz_core/minimise_finding.py).
        minimising = (self.minimise_s + 2 * SHORT_REPRO_TIMEOUT_S) if self.minimise_s else 0.0
        start = time.monotonic()
        try:
            answer = worker.call(message, self.task_timeout_s + (budget or 0.0),
                                 minimise_grace=(task_id, minimising) if minimising else None)
        except WorkerDied as died:
            return self._died(worker, spec, task_id, died, time.monotonic() - start, workdir)
        self._recycle_if_worn(worker, answer)
        if not answer.get("ok"):
            return HarnessResult(V.ERROR, f"worker error: {answer.get('error')}", elapsed_s=time.monotonic() - start,
                                 evidence={"traceback": answer.get("traceback", "")}, spec_id=spec.spec_id)
        result = HarnessResult.from_dict(answer["result"])
        confine_evidence_paths(result.evidence, worker.home)  # a worker names its own files, never a host file
        return result

    def _recycle_if_worn(self, worker: _Worker, answer: dict[str, Any]) -> None:
        """A worker near its CPU-seconds rlimit is replaced between tasks, so the limit never ends a task."""
        worker.cpu_s = float(answer.get("cpu_s") or 0.0)
        if self.limits.cpu_s and worker.cpu_s > self.limits.cpu_s / 2:
            worker.kill()

    def _died(self, worker: _Worker, spec: HarnessSpec, task_id: int, died: WorkerDied, elapsed: float,
              workdir: Path) -> HarnessResult:
        progress = worker.last_progress()
        log_tail = worker.log_tail()
        worker.kill()
        self.replaced += 1
        verdict = V.HANG if died.how == "hang" else V.CRASH
        evidence: dict[str, Any] = {"how": died.detail, "worker_log_tail": log_tail, "progress": progress}
        repro = ""
        ran_input = progress.get("task") == task_id and progress.get("phase") == "run"
        if ran_input:
            recipe = {"seed_index": progress.get("seed_index", 0), "steps": progress.get("steps", [])}
            evidence["recipe"] = recipe
            try:  # a fresh worker rebuilds and saves the input (without running the target on it)
                answer = worker.call({"op": "replay", "id": task_id, "spec": spec.to_dict(), "recipe": recipe,
                                      "workdir": str(workdir)}, REPLAY_TIMEOUT_S)
                if answer.get("ok"):
                    evidence.update(answer["replay"])
                    confine_evidence_paths(evidence, worker.home)
                    evidence.pop("repro", None)
                    repro = answer["replay"].get("repro", "")
                else:
                    evidence["replay_error"] = answer.get("error")
            except WorkerDied as again:
                evidence["replay_error"] = f"replay worker died too ({again.detail})"
                worker.kill()
        where = f"on input #{progress.get('iteration')}" if ran_input else "while setting up the harness"
        reason = f"worker {died.detail} {where}" if verdict == V.CRASH else f"worker hung {where} ({died.detail})"
        kind = spec.kind or spec.oracle
        signature = f"{spec.api}|{spec.reference_mode}->{spec.test_mode}|{kind}|{verdict}"
        executions = int(progress.get("iteration", -1)) + 1 if ran_input else 0
        return HarnessResult(verdict, reason, executions, elapsed, evidence, repro, signature, spec.spec_id, verdict)

    def cleanup(self) -> None:
        """Remove the pool's temp root (only if the pool created it)."""
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)
