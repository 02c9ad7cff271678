"""One OpInfo index per test session, built in a temporary cache directory."""

from __future__ import annotations

import os
from pathlib import Path

_built: Path | None = None


def use_session_opinfo_cache(base: Path) -> Path:
    """Point TRANSFUZZ_CACHE_DIR at a session directory (the index is built there on first use)."""
    global _built
    if _built is None:
        _built = base
        os.environ["TRANSFUZZ_CACHE_DIR"] = str(base)
    return _built
