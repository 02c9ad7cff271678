"""The sandboxed WorkerPool: segfaults and hangs become verdicts with their input; the pool keeps serving."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuzz_core import HarnessSpec, WorkerPool
from fuzz_core.sandbox import is_secret, worker_environment
from tests.fuzz_core.planted import LAYOUT_BUG

SEGFAULT = '''
import ctypes

def make_inputs(seed):
    return (torch.ones(3) * (seed + 1),), {}

def target(x):
    ctypes.string_at(0)  # null-pointer read: SIGSEGV in the worker
    return x
'''

HANG = '''
import time

def make_inputs(seed):
    return (torch.ones(3),), {}

def target(x):
    time.sleep(3600)
    return x
'''

ENV_PROBE = '''
import os

def make_inputs(seed):
    leaked = sorted(k for k in os.environ if k in ("GITHUB_TOKEN", "OPENAI_API_KEY", "TRANSFUZZ_DB_URL",
                                                  "MY_SERVICE_PASSWORD", "AWS_SECRET_ACCESS_KEY"))
    if leaked:
        raise RuntimeError(f"secrets visible in the worker: {leaked}")
    import tempfile
    temp = os.environ.get("TMPDIR", "")
    if not temp or tempfile.gettempdir() != temp or not os.path.isdir(temp):
        raise RuntimeError(f"worker has no TMPDIR: {temp!r}")
    # Private and size-capped: inside the sandbox its own tmpfs (Limits.tmp_mb, 1 GiB by default), not the
    # host's /tmp nor the worker's folder on disk.
    fs = os.statvfs(temp)
    if fs.f_blocks * fs.f_frsize > 1024 * 1024 * 1024:
        raise RuntimeError(f"TMPDIR {temp} is not capped: {fs.f_blocks * fs.f_frsize} bytes")
    if os.stat(temp).st_dev in (os.stat(os.getcwd()).st_dev, os.stat(os.environ["HOME"]).st_dev):
        raise RuntimeError(f"TMPDIR {temp} shares a filesystem with the worker's folder or HOME")
    with tempfile.NamedTemporaryFile(dir=temp) as f:
        f.write(b"x")
    return (torch.ones(3),), {}

def target(x):
    return x + 1
'''

SECRETS = {"GITHUB_TOKEN": "ghp_x", "OPENAI_API_KEY": "sk-x", "TRANSFUZZ_DB_URL": "postgresql://u:p@h/db",
           "MY_SERVICE_PASSWORD": "hunter2", "AWS_SECRET_ACCESS_KEY": "x"}


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerPool]:
    saved = {k: os.environ.get(k) for k in SECRETS}
    os.environ.update(SECRETS)  # the parent holds secrets; workers must not
    try:
        with WorkerPool(2, task_timeout_s=8, memory_limit_mb=8192, preload_opinfo=False,
                        workdir=tmp_path_factory.mktemp("pool")) as p:
            yield p
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _code_spec(name: str, code: str, **kw) -> HarnessSpec:  # type: ignore[no-untyped-def]
    return HarnessSpec(api=f"harness.{name}", input_source="code", code=code, **kw)


def test_segfault_and_hang_become_verdicts_and_the_pool_keeps_serving(pool: WorkerPool) -> None:
    crash_f = pool.submit(_code_spec("segv", SEGFAULT, oracle="crash", kind="Crash"), max_executions=3)
    hang_f = pool.submit(_code_spec("hang", HANG, oracle="crash"), max_executions=3, budget_s=1)
    crash, hang = crash_f.result(timeout=120), hang_f.result(timeout=120)
    assert crash.verdict == "crash" and "SIGSEGV" in crash.reason
    assert hang.verdict == "hang"
    for result in (crash, hang):
        # The input was recorded before it ran, and a fresh worker rebuilt and saved it.
        assert result.evidence["recipe"] == {"seed_index": 0, "steps": []}
        assert Path(result.evidence["inputs_path"]).exists()
        assert "def run_test" in result.repro
    assert crash.signature.endswith("|Crash|crash")
    assert pool.replaced >= 2
    after = pool.submit(_code_spec("layout", LAYOUT_BUG, test_mode="layout:noncontiguous"), max_executions=5)
    assert after.result(timeout=120).verdict == "confirmed"


def test_crash_repro_reproduces_in_a_fresh_interpreter(pool: WorkerPool, tmp_path: Path) -> None:
    crash = pool.submit(_code_spec("segv2", SEGFAULT, oracle="crash", seed=3), max_executions=3).result(timeout=120)
    script = tmp_path / "repro.py"
    script.write_text(crash.repro)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert run.returncode == -11  # SIGSEGV again


def test_workers_get_no_secrets_and_a_private_temp_dir(pool: WorkerPool) -> None:
    result = pool.submit(_code_spec("env", ENV_PROBE, test_mode="jit.trace"), max_executions=3).result(timeout=120)
    assert result.verdict == "passed", result.reason


def test_imap_keeps_order(pool: WorkerPool) -> None:
    specs = [_code_spec("env", ENV_PROBE, seed=s) for s in range(3)]
    results = list(pool.imap(specs, max_executions=2))
    assert [r.spec_id for r in results] == [s.spec_id for s in specs]


def test_secret_names_and_environment() -> None:
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "OPENAI_API_KEY", "TRANSFUZZ_DB_URL", "x_secret_y", "DB_PASSWORD",
                 "ANTHROPIC_API_KEY"):
        assert is_secret(name)
    assert not is_secret("PATH") and not is_secret("HOME")
    env = worker_environment({"PATH": "/bin", "GH_TOKEN": "t"}, temp_dir=Path("/tmp/w"), package_root=Path("/r"),
                             threads=1, inductor_cache=None)
    assert "GH_TOKEN" not in env and env["TMPDIR"] == "/tmp/w" and env["OMP_NUM_THREADS"] == "1"
