"""The OS sandbox that workers and repro checks run in: bubblewrap, an allow-listed environment, rlimits.

Harness code and repro scripts may derive from issue text or an LLM's answer, so they never run with the
parent's view of the machine. bubblewrap gives each one no network, its own user/PID/IPC/UTS/mount
namespaces without capabilities, a read-only view of only the system, the Python installation, the venv
and the package it needs, one private writable folder, size-capped tmpfs for /tmp, HOME and /dev/shm, a
read-only /dev of a few device nodes (plus the NVIDIA nodes when asked), and an empty environment plus an
allow-list. rlimits bound memory, CPU time, file size, open files and processes; as root, where
RLIMIT_NPROC does not bind, a pids cgroup caps the processes. docs/trust_boundary.md says exactly what is
allowed and why.
"""

from __future__ import annotations

import functools
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import time
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


# HOME inside the sandbox: a size-capped tmpfs of its own, not the writable folder the parent reads.
SANDBOX_HOME = "/home/transfuzz"
PIDS_CGROUP_PREFIX = "transfuzz_"  # one pids cgroup per sandbox, named after the bwrap process's pid
# /sys parts the CUDA driver reads (PCI topology, the driver's module), read-only, only when a GPU is bound.
GPU_SYS_PATHS = ("/sys/bus", "/sys/class", "/sys/dev", "/sys/devices", "/sys/module/nvidia",
                 "/sys/module/nvidia_uvm")
GPU_ENV_PASSED = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH")


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
    processes: int | None = 4096  # RLIMIT_NPROC: per real uid (threads count); for root a pids cgroup instead
    # Sizes of the sandbox's tmpfs mounts (bwrap_command): tmpfs pages are not address space, so RLIMIT_AS does
    # not bound them; these caps do. A write past one fails with ENOSPC.
    tmp_mb: int = 1024  # /tmp, the worker's TMPDIR
    home_mb: int = 256  # the worker's HOME (SANDBOX_HOME)
    shm_mb: int = 64  # /dev/shm

    def apply(self) -> None:
        """Set the limits on the calling process (a preexec_fn: they pass through exec to the sandbox)."""
        if self.processes and os.geteuid() == 0:
            join_pids_cgroup(self.processes)  # the kernel exempts uid 0 from RLIMIT_NPROC, even in a user namespace
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


def _pids_cgroup_base() -> Path | None:
    """The writable pids-controller folder of this process's cgroup (v1 `pids`, or v2 with pids delegated)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, relative = line.split(":", 2)
        if "pids" in controllers.split(","):
            base = Path("/sys/fs/cgroup/pids") / relative.lstrip("/")
            return base if os.access(base / "cgroup.procs", os.W_OK) else None
    for line in lines:
        if line.startswith("0::"):
            base = Path("/sys/fs/cgroup") / line[3:].lstrip("/")
            try:
                if "pids" in (base / "cgroup.subtree_control").read_text().split():
                    return base
            except OSError:
                return None
    return None


def remove_pids_cgroup(pid: int, timeout_s: float = 5.0) -> bool:
    """End what is left in the pids cgroup of the sandbox whose bwrap process was `pid`, then remove the cgroup.

    Called once that bwrap process has ended: --die-with-parent then SIGKILLs what it started, but those
    processes may still be exiting, and a cgroup with processes cannot be removed. Everything in the cgroup
    belongs to that sandbox, so what is still there is killed. True when the cgroup is gone (or never existed).
    """
    base = _pids_cgroup_base()
    if base is None:
        return True
    group = base / f"{PIDS_CGROUP_PREFIX}{int(pid)}"
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            os.rmdir(group)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
        try:
            left = [int(line) for line in (group / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            left = []
        for task in left:
            try:
                os.kill(task, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)


def remove_stale_pids_cgroups(base: Path | None = None) -> None:
    """Remove the empty per-sandbox cgroups whose bwrap process has ended (rmdir refuses a cgroup in use)."""
    base = base or _pids_cgroup_base()
    if base is None:
        return
    try:
        entries = list(os.scandir(base))
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if not (name.startswith(PIDS_CGROUP_PREFIX) and name[len(PIDS_CGROUP_PREFIX):].isdigit()):
            continue
        try:
            os.kill(int(name[len(PIDS_CGROUP_PREFIX):]), 0)
            continue  # its process still runs
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        try:
            os.rmdir(entry.path)
        except OSError:
            pass


def join_pids_cgroup(max_pids: int) -> bool:
    """Put the calling process (and so the sandbox it execs) into a new pids cgroup capped at `max_pids`.

    False where no writable pids controller exists (then only the PID namespace ends what it started).
    """
    base = _pids_cgroup_base()
    if base is None:
        return False
    remove_stale_pids_cgroups(base)
    group = base / f"{PIDS_CGROUP_PREFIX}{os.getpid()}"
    try:
        group.mkdir(exist_ok=True)
        (group / "pids.max").write_text(str(int(max_pids)))
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return False
    return True


def limits(memory_limit_mb: int | None) -> Callable[[], None]:
    """preexec_fn with the default limits and the given address-space limit."""
    return Limits(memory_mb=memory_limit_mb).apply


def worker_environment(base: Mapping[str, str], *, temp_dir: Path, package_root: Path, threads: int | None,
                       inductor_cache: Path | None, home: Path | None = None,
                       vec_isa_ok: bool = False) -> dict[str, str]:
    """The whole environment of a sandboxed process: an allow-list, never the parent's secrets.

    `vec_isa_ok`: this machine passed inductor's vector-ISA check (Note [The vector ISA check once per machine]
    in fuzz_core/inductor_isa.py), so the worker's compilations skip it."""
    env = {k: base[k] for k in PASSED_THROUGH if k in base}
    env["PATH"] = os.pathsep.join(dict.fromkeys([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin",
                                                 "/bin"]))
    env["HOME"] = str(home or temp_dir)
    env["TMPDIR"] = str(temp_dir)
    env["PYTHONPATH"] = str(package_root)
    env.update(PYTHONFAULTHANDLER="1", PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1", PYTHONNOUSERSITE="1")
    if threads is not None:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    if inductor_cache is not None:  # every compile cache goes to the pool's private folder, deleted at close
        env["TORCHINDUCTOR_CACHE_DIR"] = str(inductor_cache)
        env["TRITON_CACHE_DIR"] = str(Path(inductor_cache) / "triton")
    if vec_isa_ok:
        env["TORCHINDUCTOR_VEC_ISA_OK"] = "1"
    return env


def gpu_environment(base: Mapping[str, str]) -> dict[str, str]:
    """What a CUDA worker needs from the parent's environment on top of worker_environment (no secrets)."""
    return {k: base[k] for k in GPU_ENV_PASSED if base.get(k)}


def gpu_devices(dev_root: str | os.PathLike[str] = "/dev") -> list[Path]:
    """The NVIDIA device nodes (and the /dev/nvidia-caps folder) under `dev_root`; [] without a GPU.

    What the CUDA driver opens: nvidiactl, nvidia0..N, nvidia-uvm(-tools), nvidia-modeset, and the
    capability nodes under nvidia-caps (MIG). Only character devices (and that one folder) count: nothing else
    named nvidia* is bound. Render nodes (/dev/dri) are not needed by CUDA and are not bound.
    """
    root = Path(dev_root)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    found = []
    for name in names:
        if not name.startswith("nvidia"):
            continue
        try:
            mode = os.lstat(root / name).st_mode
        except OSError:
            continue
        if stat.S_ISCHR(mode) or (name == "nvidia-caps" and stat.S_ISDIR(mode)):
            found.append(root / name)
    if not any(p.name == "nvidiactl" for p in found) or not any(re.fullmatch(r"nvidia\d+", p.name) for p in found):
        return []  # no control node or no GPU node: no usable GPU here
    return found


def gpu_binds(devices: Sequence[Path], *, sys_paths: Sequence[str] = GPU_SYS_PATHS) -> list[str]:
    """bwrap arguments that show the GPU inside: each device node at /dev/NAME (read-write: a device node on a
    read-only mount still opens for writing, and CUDA needs that), the driver's /sys parts read-only.

    (/proc/driver/nvidia is global, so the sandbox's fresh procfs already shows it.)
    """
    argv: list[str] = []
    for device in devices:
        argv += ["--dev-bind", str(device), f"/dev/{Path(device).name}"]
    if devices:
        for path in sys_paths:
            argv += ["--ro-bind-try", path, path]
    return argv


def gpu_library_dirs(ld_library_path: str, *, never: Sequence[Path] = ()) -> list[Path]:
    """The LD_LIBRARY_PATH folders a CUDA worker gets read-only: only folders that hold the driver's libraries
    (libcuda*, libnvidia*), and never `/`, the user's home, or a folder that holds (or is) one in `never` (the
    project checkout): LD_LIBRARY_PATH is the parent's, and a bind of `$HOME` would show its secrets."""
    blocked = [Path("/"), Path.home().resolve(), *(Path(p).resolve() for p in never)]
    kept: list[Path] = []
    for entry in ld_library_path.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        folder = Path(entry).resolve()
        if any(folder == b or folder in b.parents for b in blocked) or folder in kept:
            continue
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        if any(n.startswith(("libcuda", "libnvidia")) for n in names):
            kept.append(folder)
    return kept


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
                  cwd: Path, bwrap: str | None = None, tmp_size_mb: int = 1024, shm_size_mb: int = 64,
                  home: str | None = None, home_size_mb: int = 256, devices: Sequence[Path] = ()) -> list[str]:
    """The bwrap argv that runs `command` isolated; paths appear inside at the same place as outside.

    /dev is bwrap's minimal set (null, zero, full, random, urandom, tty, pts) remounted read-only, so
    nothing can be written into it; /dev/shm, /tmp and `home` (when given) are tmpfs capped at their
    sizes. `devices` (gpu_devices()) are bound in before /dev turns read-only.
    Nothing secret goes in here: `env` is already an allow-list and the paths are the caller's folders.
    """
    argv = [bwrap or bwrap_path(), "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
            "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev",
            "--size", str(shm_size_mb * 1024 * 1024), "--tmpfs", "/dev/shm",
            *gpu_binds(devices), "--remount-ro", "/dev",
            "--size", str(tmp_size_mb * 1024 * 1024), "--tmpfs", "/tmp"]
    if home is not None:
        argv += ["--size", str(home_size_mb * 1024 * 1024), "--tmpfs", home]
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
