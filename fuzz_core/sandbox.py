"""The sandbox a worker process runs in: an environment without secrets, resource limits, its own temp dir."""

from __future__ import annotations

import os
import re
import resource
import signal
from pathlib import Path
from typing import Callable, Mapping

SECRET_NAMES = frozenset({"OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "TRANSFUZZ_DB_URL"})
_SECRET_PATTERN = re.compile(r"TOKEN|SECRET|API_KEY|PASSWORD", re.IGNORECASE)


def is_secret(name: str) -> bool:
    return name.upper() in SECRET_NAMES or bool(_SECRET_PATTERN.search(name))


def worker_environment(base: Mapping[str, str], *, temp_dir: Path, package_root: Path, threads: int | None,
                       inductor_cache: Path | None) -> dict[str, str]:
    """`base` without secrets, pointed at the worker's own temp dir, able to import fuzz_core."""
    env = {k: v for k, v in base.items() if not is_secret(k)}
    env["TMPDIR"] = str(temp_dir)
    env["PYTHONPATH"] = os.pathsep.join([str(package_root)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONFAULTHANDLER"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    if inductor_cache is not None:
        # Compiled kernels are shared between workers (they are not secret), so a replaced worker is fast again.
        env["TORCHINDUCTOR_CACHE_DIR"] = str(inductor_cache)
    return env


def limits(memory_limit_mb: int | None) -> Callable[[], None]:
    """preexec_fn: address-space limit, no core dumps, default SIGINT handling."""

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if memory_limit_mb:
            size = int(memory_limit_mb) * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (size, size))
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which then ends workers

    return apply


def signal_name(returncode: int) -> str:
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"
