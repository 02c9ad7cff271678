"""The OS sandbox that workers and repro checks run in: bubblewrap, an allow-listed environment, rlimits.

Harness code and repro scripts may derive from issue text or an LLM's answer, so they never run with the
parent's view of the machine. bubblewrap gives each one no network, its own user/PID/IPC/UTS/mount
namespaces without capabilities, a read-only view of only the system, the Python installation, the venv
and the package it needs, one private writable folder, a private /tmp, and an empty environment plus an
allow-list. rlimits bound memory, CPU time, file size, open files and processes. docs/trust_boundary.md
says exactly what is allowed and why.
"""

from __future__ import annotations

import functools
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

BWRAP_ENV = "TRANSFUZZ_BWRAP"  # path of the bwrap binary (tests point it at a missing file)
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`, Fedora: `dnf install bubblewrap`)"
                " or, for trusted local use only, pass --no-sandbox")

SECRET_NAMES = frozenset({"OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "TRANSFUZZ_DB_URL", "DATABASE_URL",
                          "SSH_AUTH_SOCK", "KUBECONFIG", "NETRC"})
_SECRET_PATTERN = re.compile(r"TOKEN|SECRET|API_KEY|PASSWORD|^AWS_|CREDENTIAL|_KEY$", re.IGNORECASE)

# The only variables copied from the parent; everything else a sandboxed process sees is set here.
PASSED_THROUGH = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64")
# /etc entries the dynamic loader, gcc and getpass need; never the whole of /etc (shadow, ssh keys, ...).
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "passwd", "group",
               "nsswitch.conf")


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot start a sandbox here."""


def is_secret(name: str) -> bool:
    return name.upper() in SECRET_NAMES or bool(_SECRET_PATTERN.search(name))


@dataclass(frozen=True)
class Limits:
    """Per-process rlimits; generous enough that an honest harness never meets them (see the docs)."""

    memory_mb: int | None = 8192  # RLIMIT_AS: address space, torch reserves more than it touches
    cpu_s: int | None = 4 * 3600  # RLIMIT_CPU of a long-lived worker; the pool recycles it at half of this
    file_size_mb: int | None = 4096  # RLIMIT_FSIZE: saved inputs of large tensors stay below
    open_files: int | None = 4096  # RLIMIT_NOFILE
    processes: int | None = 4096  # RLIMIT_NPROC: per real uid (threads count); the kernel exempts root

    def apply(self) -> None:
        """Set the limits on the calling process (a preexec_fn: they pass through exec to the sandbox)."""
        _set(resource.RLIMIT_CORE, 0)
        for which, value in ((resource.RLIMIT_AS, _mb(self.memory_mb)), (resource.RLIMIT_CPU, self.cpu_s),
                             (resource.RLIMIT_FSIZE, _mb(self.file_size_mb)),
                             (resource.RLIMIT_NOFILE, self.open_files), (resource.RLIMIT_NPROC, self.processes)):
            if value:
                _set(which, int(value))
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which then ends the sandbox


def _mb(value: int | None) -> int | None:
    return int(value) * 1024 * 1024 if value else None


def _set(which: int, value: int) -> None:
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)  # an unprivileged process cannot raise its hard limit
    resource.setrlimit(which, (value, value))


def limits(memory_limit_mb: int | None) -> Callable[[], None]:
    """preexec_fn with the default limits and the given address-space limit."""
    return Limits(memory_mb=memory_limit_mb).apply


def worker_environment(base: Mapping[str, str], *, temp_dir: Path, package_root: Path, threads: int | None,
                       inductor_cache: Path | None, home: Path | None = None) -> dict[str, str]:
    """The whole environment of a sandboxed process: an allow-list, never the parent's secrets."""
    env = {k: base[k] for k in PASSED_THROUGH if k in base}
    env["PATH"] = os.pathsep.join(dict.fromkeys([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin",
                                                 "/bin"]))
    env["HOME"] = str(home or temp_dir)
    env["TMPDIR"] = str(temp_dir)
    env["PYTHONPATH"] = str(package_root)
    env.update(PYTHONFAULTHANDLER="1", PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1", PYTHONNOUSERSITE="1")
    if threads is not None:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    if inductor_cache is not None:
        env["TORCHINDUCTOR_CACHE_DIR"] = str(inductor_cache)
    return env


def bwrap_path() -> str:
    return os.environ.get(BWRAP_ENV) or shutil.which("bwrap") or "/usr/bin/bwrap"


def python_paths(package_dir: Path | None = None) -> list[Path]:
    """What the interpreter needs read-only: its installation, the venv, and (optionally) one package."""
    paths = [Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent.parent]
    if package_dir is not None:
        paths.append(package_dir)
    return paths


def _without_nested(paths: Iterable[Path]) -> list[Path]:
    """Resolved, existing paths, parents before children, those under another one dropped."""
    kept: list[Path] = []
    for path in sorted({Path(os.path.realpath(p)) for p in paths if os.path.exists(p)}, key=lambda p: len(p.parts)):
        if not any(path == k or k in path.parents for k in kept):
            kept.append(path)
    return kept


def bwrap_command(command: Sequence[str], *, writable: Sequence[Path], readonly: Sequence[Path], env: Mapping[str, str],
                  cwd: Path, bwrap: str | None = None, tmp_size_mb: int = 1024) -> list[str]:
    """The bwrap argv that runs `command` isolated; paths appear inside at the same place as outside.

    Nothing secret goes in here: `env` is already an allow-list and the paths are the caller's folders.
    """
    argv = [bwrap or bwrap_path(), "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
            "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev",
            "--size", str(tmp_size_mb * 1024 * 1024), "--tmpfs", "/tmp"]
    for name in SYSTEM_DIRS:
        if os.path.islink(name):
            argv += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            argv += ["--ro-bind", name, name]
    for name in ETC_ENTRIES:
        path = f"/etc/{name}"
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    system = [Path(p) for p in SYSTEM_DIRS]
    for path in _without_nested(readonly):
        if not any(path == s or s in path.parents for s in system):
            argv += ["--ro-bind", str(path), str(path)]
    for path in writable:
        argv += ["--bind", str(path), str(path)]
    argv += ["--remount-ro", "/", "--chdir", str(cwd), "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return argv + ["--", *command]


@functools.lru_cache(maxsize=8)
def _self_check(bwrap: str) -> str:
    """'' when bwrap starts a Python inside a sandbox here, else why not."""
    if not (os.path.isfile(bwrap) and os.access(bwrap, os.X_OK)):
        return f"bubblewrap not found at {bwrap}"
    argv = bwrap_command([sys.executable, "-c", "import sys"], writable=[], readonly=python_paths(),
                         env={"PATH": "/usr/bin"}, cwd=Path(sys.prefix), bwrap=bwrap)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap at {bwrap} did not run: {exc}"
    if done.returncode != 0:
        return f"bubblewrap at {bwrap} cannot start a sandbox here: {(done.stderr or '').strip()[-500:]}"
    return ""


def require_bwrap(bwrap: str | None = None) -> str:
    """The bwrap binary to use, after checking once per process that it works; else SandboxUnavailable."""
    path = bwrap or bwrap_path()
    problem = _self_check(path)
    if problem:
        raise SandboxUnavailable(f"{problem}. Workers run code derived from issues and LLM answers and must be "
                                 f"sandboxed: {INSTALL_HINT}.")
    return path


def signal_name(returncode: int, *, sandboxed: bool = False) -> str:
    """How a process ended; bwrap reports a child killed by signal N as exit status 128 + N."""
    number = -returncode if returncode < 0 else returncode - 128 if sandboxed and returncode > 128 else 0
    if number:
        try:
            return signal.Signals(number).name
        except ValueError:
            return f"signal {number}"
    return f"exit status {returncode}"
