"""Run exported repro scripts in a sandboxed interpreter and compare their exit code with the verdict.

Repro scripts may carry data that came from an issue or an LLM, so they never run in this process,
nor with its view of the machine: each gets a fresh ``python -I`` inside the same bubblewrap sandbox
as the fuzz workers (fuzz_core.sandbox: no network, own namespaces, read-only system and venv, the
script and its inputs read-only, a private temporary directory as cwd and HOME, an environment holding
only PATH and locale, rlimits), and a wall-clock limit after which the whole sandbox is killed.
Without bubblewrap it refuses (SandboxUnavailable) unless the caller passes ``sandbox=False``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from pydantic import BaseModel

from fuzz_core.sandbox import Limits, bwrap_command, python_paths, require_bwrap

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


REPRO_LIMITS = Limits(memory_mb=8192, cpu_s=3600)


def _sandbox_env(home: str) -> dict[str, str]:
    env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
    env.update(HOME=home, TMPDIR=home, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    return env


def repro_command(script: Path, args: list[str], workdir: str, bwrap: str | None, *,
                  readonly: Sequence[Path] = ()) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that run one repro; inside bwrap the script and file arguments are read-only.

    `readonly`: more folders the script needs to read (the recorder's package for a recorded run).
    """
    command = [sys.executable, "-I", str(script.resolve()), *args]
    env = _sandbox_env(workdir)
    if bwrap is None:
        return command, env
    files = [script.resolve(), *readonly] + [Path(a) for a in args if os.path.isabs(a) and os.path.exists(a)]
    argv = bwrap_command(command, writable=[Path(workdir)], readonly=python_paths() + files, env=env,
                         cwd=Path(workdir), bwrap=bwrap)
    return argv, {}


def run_repro(
    script: Path,
    *,
    finding_id: int,
    verdict: str,
    args: list[str] | None = None,
    timeout_s: float = 120.0,
    sandbox: bool = True,
    bwrap: str | None = None,
) -> ReproCheck:
    """Run one repro; `sandbox=False` (trusted local use only) runs it without bubblewrap."""
    import time

    tool = require_bwrap(bwrap) if sandbox else None
    expected = EXPECTED_EXIT.get(verdict)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="transfuzz-repro-") as workdir:
        command, env = repro_command(script, list(args or []), workdir, tool)
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            preexec_fn=REPRO_LIMITS.apply,
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
