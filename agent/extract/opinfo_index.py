"""OpInfo metadata per API, computed once per torch version in a child process and cached.

Note [Why OpInfo in a child process]
Importing ``torch.testing._internal.common_methods_invocations`` takes seconds and changes
global state of the importing process: it calls ``torch.backends.disable_global_flags()``,
reseeds the RNGs and parses ``sys.argv``. The pipeline (and the fuzz core in the same
process) must not inherit that, so a child process dumps the few fields we need as JSON into
a cache file named after the torch version; every later lookup is a dict access.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from functools import cache
from pathlib import Path
from typing import Any

CACHE_DIR_ENV = "TRANSFUZZ_CACHE_DIR"
_SECRET_ENV = ("OPENAI_API_KEY", "GITHUB_TOKEN", "TRANSFUZZ_DB_URL")


def cache_dir() -> Path:
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "transfuzz"


def _api_name(op_name: str) -> str:
    return op_name if op_name.startswith("torch.") else f"torch.{op_name}"


def _dump() -> dict[str, dict[str, Any]]:
    """Runs in the child: the OpInfo fields the semantics step uses, keyed by qualified API."""
    sys.argv = sys.argv[:1]  # common_utils parses argv at import time
    from torch.testing._internal.common_methods_invocations import op_db

    kinds = {
        "UnaryUfuncInfo": "elementwise_unary",
        "BinaryUfuncInfo": "elementwise_binary",
        "ReductionOpInfo": "reduction",
        "SpectralFuncInfo": "fft",
        "ShapeFuncInfo": "shape",
    }
    index: dict[str, dict[str, Any]] = {}
    for op in op_db:
        api = _api_name(op.name)
        entry = index.setdefault(
            api,
            {
                "opinfo_class": type(op).__name__,
                "category": kinds.get(type(op).__name__),
                "dtypes": set(),
                "supports_out": bool(getattr(op, "supports_out", False)),
                "has_inplace": getattr(op, "inplace_variant", None) is not None,
                "has_method": getattr(op, "method_variant", None) is not None,
                "domain": None,
                "supports_autograd": bool(getattr(op, "supports_autograd", False)),
                "aliases": [],
                "variants": [],
            },
        )
        entry["dtypes"] |= {str(d).replace("torch.", "") for d in getattr(op, "dtypes", ()) or ()}
        domain = getattr(op, "domain", None)
        if domain and any(bound is not None for bound in domain):
            entry["domain"] = [None if b is None else float(b) for b in domain]
        if op.variant_test_name:
            entry["variants"].append(op.variant_test_name)
        for alias in getattr(op, "aliases", ()) or ():
            entry["aliases"].append(_api_name(alias.name))
    for api, entry in list(index.items()):
        entry["dtypes"] = sorted(entry["dtypes"])
        for alias in entry["aliases"]:
            index.setdefault(alias, {**entry, "alias_of": api})
    return index


def _torch_version() -> str:
    import torch

    return torch.__version__


def index_path() -> Path:
    return cache_dir() / f"opinfo-{_torch_version()}.json"


def build_index(path: Path | None = None, *, timeout_s: float = 300.0) -> Path:
    """Write the OpInfo index for the installed torch (child process); returns its path."""
    target = path or index_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in _SECRET_ENV}
    proc = subprocess.run(
        [sys.executable, "-m", "agent.extract.opinfo_index"],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env=env,
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    if proc.returncode != 0:
        raise RuntimeError(f"OpInfo index failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
    tmp = target.with_suffix(".tmp")
    tmp.write_text(proc.stdout)
    json.loads(tmp.read_text())  # refuse to install a truncated file
    tmp.replace(target)
    return target


@cache
def opinfo_index() -> dict[str, dict[str, Any]]:
    """API -> OpInfo fields; built on first use, then read from the cache file.

    Without the index (torch's test helpers need ``expecttest``; a child can time out) the
    semantics fall back to introspection alone: a warning, an empty index for this process,
    and no cache file, so the next process tries again.
    """
    path = index_path()
    try:
        if not path.is_file():
            build_index(path)
        return json.loads(path.read_text())
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as exc:
        warnings.warn(f"OpInfo metadata unavailable, using introspection only: {exc}", RuntimeWarning, stacklevel=2)
        return {}


if __name__ == "__main__":
    json.dump(_dump(), sys.stdout, sort_keys=True)
