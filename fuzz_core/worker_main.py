"""The worker process: read harness tasks as JSON lines, run them in-process, answer on a private pipe."""

from __future__ import annotations

import json
import mmap
import os
import resource
import sys
import traceback
from typing import Any


def _open_channel() -> Any:
    """Keep the real stdout for answers; the target's prints go to stderr (the worker's log)."""
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


class ProgressFile:
    """Each input's recipe is written here BEFORE it runs, so a crash or hang still names its input.

    The file is mapped into memory: a record is a copy into shared pages, not two system calls per input
    (Note [The hot loop] in fuzz_core/campaign.py). A record is JSON, then blanks over the rest of the
    previous record, then NULs; the reader (workers._Worker.last_progress) strips both. A record longer
    than the map, or a descriptor that cannot be mapped, is written with pwrite instead.
    """

    MAP_BYTES = 64 * 1024

    def __init__(self, fd: int) -> None:
        self.fd = fd  # opened by the pool on a file outside the worker's writable folder
        self.length = 0  # bytes of the record now in the file
        self.map: mmap.mmap | None = None
        try:
            os.ftruncate(fd, self.MAP_BYTES)
            self.map = mmap.mmap(fd, self.MAP_BYTES)
        except (OSError, ValueError):  # e.g. a write-only descriptor
            self.map = None

    def write(self, record: dict[str, Any]) -> None:
        self.write_bytes(json.dumps(record, separators=(",", ":")).encode())

    def write_bytes(self, data: bytes) -> None:
        """A record already encoded as JSON (RunProgress.encoded builds the hot loop's without json.dumps)."""
        stale = self.length - len(data)
        if self.map is not None and len(data) <= self.MAP_BYTES and self.length <= self.MAP_BYTES:
            self.map[:len(data)] = data
            if stale > 0:
                self.map[len(data):self.length] = b" " * stale
        else:
            os.pwrite(self.fd, data + b" " * max(stale, 0), 0)
        self.length = len(data)


class RunProgress:
    """The campaign's progress callback for one task: each input's recipe, as {"task", "phase": "run", **recipe}.

    `encoded` is the hot loop's way in (Note [The hot loop] in fuzz_core/campaign.py): the campaign hands the
    recipe's steps already encoded as JSON (each corpus entry's encoding is its parent's plus one step), and the
    record is put together as text, the same bytes json.dumps gives for the dict.
    """

    def __init__(self, progress: ProgressFile, task_id: Any) -> None:
        self.progress = progress
        self.task_id = task_id
        self._head = '{"task":' + json.dumps(task_id, separators=(",", ":")) + ',"phase":"run","iteration":'

    def __call__(self, recipe: dict[str, Any]) -> None:
        self.progress.write({"task": self.task_id, "phase": "run", **recipe})

    def encoded(self, iteration: int, seed_index: int, steps_json: str) -> None:
        self.progress.write_bytes(
            f'{self._head}{iteration},"seed_index":{seed_index},"steps":{steps_json}}}'.encode())


def main() -> int:
    progress_fd = int(sys.argv[1])
    channel = _open_channel()
    import torch  # noqa: F401 - import before saying ready, so task timeouts do not include it

    if "--preload-opinfo" in sys.argv:
        from fuzz_core.inputs.opinfo import op_db

        op_db()  # several seconds; paid at start-up, not inside a task's timeout

    from fuzz_core.runner import replay_input, run_harness
    from fuzz_core.spec import HarnessSpec

    progress = ProgressFile(progress_fd)
    channel.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        task = json.loads(line)
        try:
            spec = HarnessSpec.from_dict(task["spec"])
            if task.get("op") == "replay":
                answer: dict[str, Any] = {"ok": True, "replay": replay_input(spec, task["recipe"], task["workdir"])}
            else:
                progress.write({"task": task["id"], "phase": "setup"})

                record = RunProgress(progress, task["id"])
                result = run_harness(spec, budget_s=task.get("budget_s"), max_executions=task.get("max_executions"),
                                     workdir=task["workdir"], progress=record,
                                     instrument=task.get("instrument") or "op",
                                     min_inputs=int(task.get("min_inputs") or 0))
                if task.get("minimise_s") and result.verdict == "confirmed":  # Note [Shrinking failing inputs]
                    from fuzz_core.minimise_finding import minimise_result

                    progress.write({"task": task["id"], "phase": "minimise"})
                    # Note [One input per finding]: the smallest input becomes the finding's input.
                    result = minimise_result(spec, result, task["workdir"], budget_s=float(task["minimise_s"]))
                answer = {"ok": True, "result": result.to_dict()}
        except Exception as exc:  # a tool bug: report it, keep serving
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-3000:]}
        answer["id"] = task.get("id")
        usage = resource.getrusage(resource.RUSAGE_SELF)
        answer["cpu_s"] = round(usage.ru_utime + usage.ru_stime, 3)  # the pool recycles a worker near its CPU rlimit
        channel.write(json.dumps(answer, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
