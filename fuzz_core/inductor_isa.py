"""Whether inductor's vector-ISA check passes on this machine, found once per machine instead of once per pool.

Note [The vector ISA check once per machine]
Before inductor's C++ backend uses a vector ISA the CPU lists (AVX2, AVX512, ...), it builds and loads a small
test library with that ISA's flags (torch/_inductor/cpu_vec_isa.py, VecISA.check_build): six g++ runs, about
8.5 s on our 2-core machine, kept in the compile cache. Each pool's compile cache is fresh (compiled kernels are
code: fuzz_core/workers.py), so every pool's first inductor compilation paid the check again: sigmoid's first
compilation in a fresh cache took 15 s, 3 s with the check's results at hand. The outcome depends on the machine
(torch, the compiler, the CPU's flags), never on a harness, so the parent finds it once, in a subprocess of its
own with a throw-away cache, and keeps it in the user's cache folder keyed by those three. Where every ISA the CPU
lists passed, workers run with TORCHINDUCTOR_VEC_ISA_OK=1, under which inductor takes the CPU's list without
building the test: the ISA it would have picked anyway. Where one failed (a compiler without AVX512 support), or
the check could not run, workers keep inductor's own check.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ENV_VAR = "TORCHINDUCTOR_VEC_ISA_OK"
CHECK_TIMEOUT_S = 300.0
# Run in a subprocess with a throw-away compile cache: the ISAs the CPU lists and those inductor's check passes.
_CHECK = """
import json
from torch._inductor import cpu_vec_isa as v
flags = v.x86_isa_checker()
listed = [str(i) for i in v.supported_vec_isa_list if all(f in flags for f in str(i).split())]
print(json.dumps({"listed": listed, "valid": [str(i) for i in v.valid_vec_isa_list()]}))
"""


def _first_line(command: list[str]) -> str:
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.splitlines()[0] if out else ""


def _cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return ""
    return next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("flags")), "")


def machine_key() -> str:
    """What the check's outcome depends on: torch, the C++ compiler inductor calls, the CPU's flags."""
    import torch

    compiler = os.environ.get("CXX") or "g++"
    parts = [torch.__version__, platform.machine(), compiler, _first_line([compiler, "--version"]), _cpu_flags()]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:20]


def default_cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "transfuzz"


def check_vec_isa(cache_dir: Path) -> bool:
    """True when inductor's check passes for every ISA the CPU lists; read from `cache_dir` when found before."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return False
    record = cache_dir / f"vec_isa_{machine_key()}.json"
    try:
        found = json.loads(record.read_text())
        return bool(found["listed"]) and found["listed"] == found["valid"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    with tempfile.TemporaryDirectory(prefix="transfuzz_vec_isa_") as scratch:
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "CXX", "LD_LIBRARY_PATH", "LANG")}
        env.update(TORCHINDUCTOR_CACHE_DIR=scratch, HOME=scratch, TMPDIR=scratch)
        try:
            proc = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True, env=env,
                                  timeout=CHECK_TIMEOUT_S, check=False)
            found = json.loads(proc.stdout.strip().splitlines()[-1])
            listed, valid = list(found["listed"]), list(found["valid"])
        except (OSError, subprocess.SubprocessError, ValueError, IndexError, KeyError, TypeError):
            return False  # the check could not run: nothing is kept, inductor checks for itself
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        partial = record.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps({"listed": listed, "valid": valid}))
        partial.replace(record)  # atomic: a second process reads the whole answer or none
    except OSError:
        pass  # an unwritable cache folder costs the check next time, nothing else
    return bool(listed) and listed == valid


@functools.cache
def vec_isa_ok() -> bool:
    """check_vec_isa in the user's cache folder, once per process."""
    return check_vec_isa(default_cache_dir())
