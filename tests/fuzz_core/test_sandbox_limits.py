"""Sandbox limits that hold as root (issue 22, item 4), seen from inside a real sandboxed worker:

- /dev is bubblewrap's minimal set, mounted read-only: a new file there cannot be made;
- /dev/shm, the worker's HOME and its TMPDIR (/tmp) are tmpfs with their own caps (Limits.shm_mb, home_mb,
  tmp_mb; small here): writing past a cap fails with ENOSPC, and nothing written there reaches the host;
- a fork bomb stops at the pids cgroup (root) or RLIMIT_NPROC (anyone else), and its children are gone.

Each probe is trusted harness code (input_source "code") whose module-level code does the attack and writes what
it saw into its working directory, where the test reads it (as in test_sandbox.py).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fuzz_core import HarnessSpec, WorkerPool
from fuzz_core.sandbox import PIDS_CGROUP_PREFIX, Limits, _pids_cgroup_base
from tests.fuzz_core.test_sandbox import REPORT, _fill, _spec

SHM_MB, HOME_MB, TMP_MB, PROCESSES = 8, 8, 16, 64
LIMITS = Limits(memory_mb=8192, processes=PROCESSES, shm_mb=SHM_MB, home_mb=HOME_MB, tmp_mb=TMP_MB)
CHUNK = 1024 * 1024

DEV_PROBE = REPORT + '''
_report("dev", {"entries": sorted(os.listdir("/dev")),
                "read_only": bool(os.statvfs("/dev").f_flag & os.ST_RDONLY),
                "new_file": _try(lambda: open("/dev/x", "w").write("x")),
                "new_dir": _try(lambda: os.mkdir("/dev/y")),
                "null": _try(lambda: open("/dev/null", "w").write("x"))})
'''

# Write 1 MiB chunks until the write fails, stopping (and saying so) well past the cap; then free the space.
FILL_PROBE = REPORT + '''
import errno

def _fill(folder):
    path, written, error = os.path.join(folder, "fill.bin"), 0, None
    chunk = b"x" * @CHUNK@
    try:
        with open(path, "wb", buffering=0) as f:
            while written < @STOP@:
                written += f.write(chunk)
    except OSError as exc:
        error = errno.errorcode.get(exc.errno, str(exc.errno))
    fs = os.statvfs(folder)
    try:
        os.unlink(path)
    except OSError:
        pass
    return {"folder": folder, "written": written, "error": error, "size": fs.f_blocks * fs.f_frsize}

_report("fill", {"shm": _fill("/dev/shm"), "home": _fill(os.environ["HOME"]), "tmp": _fill(os.environ["TMPDIR"])})
'''

# Fork children that wait on a pipe until fork fails (or a safety stop far past the cap), then end them all.
FORK_PROBE = REPORT + '''
import errno

def _procs():
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())

_before = _procs()
_read_end, _write_end = os.pipe()
_children, _error = [], None
while len(_children) < @STOP@:
    try:
        _pid = os.fork()
    except OSError as exc:
        _error = errno.errorcode.get(exc.errno, str(exc.errno))
        break
    if _pid == 0:
        os.close(_write_end)
        os.read(_read_end, 1)  # until the parent closes its end
        os._exit(0)
    _children.append(_pid)
_during = len(_procs())
os.close(_write_end)
os.close(_read_end)
for _pid in _children:
    os.waitpid(_pid, 0)
_report("fork", {"forked": len(_children), "error": _error, "procs_before": _before, "procs_during": _during,
                 "procs_after": _procs()})
'''


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerPool]:
    with WorkerPool(1, task_timeout_s=120, preload_opinfo=False, workdir=tmp_path_factory.mktemp("limits"),
                    limits=LIMITS) as p:
        yield p


def _probe(pool: WorkerPool, name: str, code: str) -> dict[str, Any]:
    # A fresh comment makes a fresh spec: the worker loads a spec's code (and runs the probe) once.
    code += f"\n# {uuid.uuid4().hex}\n"
    result = pool.submit(HarnessSpec(**_spec(code)), max_executions=1).result(timeout=300)
    assert result.verdict == "passed", result.reason
    [report] = pool.root.glob(f"tf_worker*/home/**/probe_{name}.json")
    seen = json.loads(report.read_text())
    report.unlink()
    return seen


def test_dev_is_read_only_and_minimal(pool: WorkerPool) -> None:
    seen = _probe(pool, "dev", DEV_PROBE)
    assert seen["read_only"] is True
    assert seen["new_file"].startswith("failed: OSError") and "Read-only file system" in seen["new_file"]
    assert seen["new_dir"].startswith("failed") and seen["null"] == "done"
    # bwrap's --dev set; no disks, no /dev/mem, no GPU (none was asked for)
    assert set(seen["entries"]) <= {"null", "zero", "full", "random", "urandom", "tty", "pts", "ptmx", "shm", "fd",
                                    "stdin", "stdout", "stderr", "core", "console"}, seen["entries"]
    assert {"null", "zero", "urandom", "shm"} <= set(seen["entries"])


@pytest.mark.parametrize(("name", "cap_mb"), [("shm", SHM_MB), ("home", HOME_MB), ("tmp", TMP_MB)])
def test_shm_home_and_tmp_are_capped(pool: WorkerPool, name: str, cap_mb: int) -> None:
    seen = _probe(pool, "fill", _fill(FILL_PROBE, CHUNK=CHUNK, STOP=4 * TMP_MB * CHUNK))[name]
    assert seen["error"] == "ENOSPC", seen  # it stopped at the cap, not at the probe's own safety stop
    assert seen["size"] == cap_mb * CHUNK, seen
    assert (cap_mb - 1) * CHUNK <= seen["written"] <= cap_mb * CHUNK, seen  # the whole cap was usable, no more


def test_filling_them_leaves_nothing_on_the_host(pool: WorkerPool) -> None:
    _probe(pool, "fill", _fill(FILL_PROBE, CHUNK=CHUNK, STOP=CHUNK))
    assert not list(pool.root.rglob("fill.bin"))
    assert not Path("/dev/shm/fill.bin").exists() and not Path("/tmp/fill.bin").exists()


def _our_cgroups() -> set[str]:
    base = _pids_cgroup_base()
    return {p.name for p in base.iterdir() if p.name.startswith(PIDS_CGROUP_PREFIX)} if base else set()


def test_a_fork_bomb_stops_at_the_process_cap_and_leaves_nothing(pool: WorkerPool) -> None:
    as_root = os.geteuid() == 0
    if as_root and _pids_cgroup_base() is None:
        pytest.skip("running as root without a writable pids cgroup: RLIMIT_NPROC does not bind for uid 0, so "
                    "only the PID namespace ends what a worker starts")
    seen = _probe(pool, "fork", _fill(FORK_PROBE, STOP=20 * PROCESSES))
    assert seen["error"] == "EAGAIN", seen  # fork itself failed, before the probe's own stop
    assert seen["forked"] < PROCESSES, seen
    if as_root:  # the cap is the pids cgroup of this sandbox alone: everything else in it is a few processes
        assert seen["forked"] >= PROCESSES // 2, seen
        assert seen["procs_during"] >= len(seen["procs_before"]) + seen["forked"]
    assert seen["procs_after"] == seen["procs_before"]  # every child ended and was reaped
    # The worker is still usable after it.
    assert _probe(pool, "dev", DEV_PROBE)["read_only"] is True


def test_the_pids_cgroup_of_a_worker_is_capped_and_removed_with_the_pool(tmp_path: Path) -> None:
    if os.geteuid() != 0 or _pids_cgroup_base() is None:
        pytest.skip("the pids cgroup is used only as root where a writable pids controller exists")
    before = _our_cgroups()
    with WorkerPool(1, task_timeout_s=60, preload_opinfo=False, workdir=tmp_path, limits=LIMITS) as p:
        p.warm()
        mine = f"{PIDS_CGROUP_PREFIX}{p._workers[0].proc.pid}"  # named after the worker's bwrap process
        assert mine in _our_cgroups() - before
        assert (_pids_cgroup_base() / mine / "pids.max").read_text().strip() == str(PROCESSES)
    assert mine not in _our_cgroups()
