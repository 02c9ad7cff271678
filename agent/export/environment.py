"""The environment a report is filed from: torch version, platform, and collect_env (computed once)."""

from __future__ import annotations

import platform
import sys
import threading

from pydantic import BaseModel


class Environment(BaseModel):
    torch_version: str
    python: str
    platform: str
    collect_env: str


def capture_environment(*, collect_env: bool = True) -> Environment:
    """Capture once per export: collect_env spawns pip, lscpu and friends and takes seconds."""
    import torch

    text = "(collect_env not run)"
    if collect_env:
        try:
            from torch.utils.collect_env import get_pretty_env_info

            text = get_pretty_env_info()
        except Exception as exc:  # noqa: BLE001 - any failure here must not lose the export
            text = f"(collect_env failed: {type(exc).__name__}: {exc})"
    return Environment(
        torch_version=torch.__version__,
        python=sys.version.split()[0],
        platform=platform.platform(),
        collect_env=text,
    )


_SHARED: Environment | None = None
_SHARED_LOCK = threading.Lock()


def shared_environment() -> Environment:
    """The full environment (with collect_env), captured once per process: `transfuzz export` captures it once,
    and the review server's exports reuse one capture, so a page export and the CLI's write the same reports
    (collect_env decides a report rule) without making each download wait seconds for pip and lscpu."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = capture_environment()
        return _SHARED
