"""Repro scripts run sandboxed: fresh interpreter, no secrets, own directory, killed at the limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.export.verify import run_repro

ENV_PROBE = """import json, os, sys
print(json.dumps({"env": sorted(os.environ), "cwd": os.getcwd(), "home": os.environ.get("HOME")}))
sys.exit(1)
"""


def test_secrets_stay_out_and_the_exit_code_is_compared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    script = tmp_path / "probe.py"
    script.write_text(ENV_PROBE)
    check = run_repro(script, finding_id=7, verdict="confirmed", timeout_s=60)
    assert check.exit_code == 1 and check.expected_exit == 1 and check.agrees is True
    seen = json.loads(check.output_tail)
    assert "OPENAI_API_KEY" not in seen["env"] and "GITHUB_TOKEN" not in seen["env"]
    assert seen["cwd"] == seen["home"] and seen["cwd"] != str(tmp_path)
    assert not Path(seen["cwd"]).exists()  # its directory is removed afterwards

    passed = run_repro(script, finding_id=8, verdict="passed", timeout_s=60)
    assert passed.agrees is False and passed.expected_exit == 0
    suspicious = run_repro(script, finding_id=9, verdict="suspicious", timeout_s=60)
    assert suspicious.expected_exit is None and suspicious.agrees is None


def test_a_hanging_repro_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "hang.py"
    script.write_text("import time\nprint('started', flush=True)\ntime.sleep(600)\n")
    check = run_repro(script, finding_id=1, verdict="confirmed", timeout_s=1.5)
    assert check.exit_code is None and check.agrees is False
    assert "started" in check.output_tail and "killed after 1.5 s" in check.output_tail
    assert check.seconds < 30
