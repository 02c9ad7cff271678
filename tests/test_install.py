"""`pip install -e .` (the README's set-up) builds without a banner from the build backend."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_editable_build_prints_no_backend_banner(tmp_path: Path) -> None:
    pytest.importorskip("setuptools")
    build = (
        "import sys, setuptools.build_meta as b; "
        f"print(b.build_editable({str(tmp_path)!r}))"
    )
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", build], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / done.stdout.strip().splitlines()[-1]).is_file()
    # setuptools frames its warnings (deprecations, editable-mode notes) between "!!" lines
    assert "!!" not in done.stderr, done.stderr
