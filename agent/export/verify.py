"""Run exported repro scripts in a sandboxed interpreter and compare their exit code with the verdict.

Repro scripts may carry code that came from an issue or an LLM, so they never run in this
process: each gets a fresh ``python -I`` (isolated: no user site, no PYTHON* variables), its
own temporary directory as cwd and HOME, an environment holding only PATH and locale (no
tokens or keys), no core dumps, a new session so a timeout kills it and its children, and a
wall-clock limit.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from pydantic import BaseModel

# The exit code a repro must give for each verdict; verdicts absent here promise nothing.
EXPECTED_EXIT = {"confirmed": 1, "passed": 0, "not_applicable": 0}

_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE")
_OUTPUT_TAIL = 2000


class ReproCheck(BaseModel):
    finding_id: int
    verdict: str
    exit_code: int | None  # None: killed at the time limit
    expected_exit: int | None
    agrees: bool | None  # None when the verdict promises no exit code
    output_tail: str
    seconds: float


def _limits() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _sandbox_env(home: str) -> dict[str, str]:
    env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
    env.update(HOME=home, TMPDIR=home, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    return env


def run_repro(
    script: Path, *, finding_id: int, verdict: str, args: list[str] | None = None, timeout_s: float = 120.0
) -> ReproCheck:
    import time

    expected = EXPECTED_EXIT.get(verdict)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="transfuzz-repro-") as workdir:
        process = subprocess.Popen(
            [sys.executable, "-I", str(script.resolve()), *(args or [])],
            cwd=workdir,
            env=_sandbox_env(workdir),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            preexec_fn=_limits,
        )
        try:
            output, _ = process.communicate(timeout=timeout_s)
            exit_code: int | None = process.returncode
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            exit_code = None
            output += f"\n(killed after {timeout_s:g} s)"
    return ReproCheck(
        finding_id=finding_id,
        verdict=verdict,
        exit_code=exit_code,
        expected_exit=expected,
        agrees=None if expected is None else exit_code == expected,
        output_tail=output[-_OUTPUT_TAIL:],
        seconds=round(time.monotonic() - started, 3),
    )
