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


HOSTILE = """import json, os, socket, sys
seen = {"parent_environ": open("/proc/%d/environ" % os.getppid(), "rb").read().decode("latin-1"),
        "pids": sorted(p for p in os.listdir("/proc") if p.isdigit()), "inputs": open(sys.argv[1]).read()}
for name, action in {"write": lambda: open(sys.argv[2], "w").write("pwned"),
                     "connect": lambda: socket.create_connection(("127.0.0.1", int(sys.argv[3])), timeout=3)}.items():
    try:
        action()
        seen[name] = "done"
    except OSError as exc:
        seen[name] = "failed: " + type(exc).__name__
print(json.dumps(seen))
sys.exit(1)
"""


def test_a_hostile_repro_sees_no_secret_no_network_and_writes_nothing_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET123")
    script, inputs, outside = tmp_path / "repro.py", tmp_path / "inputs.json", tmp_path / "outside.txt"
    script.write_text(HOSTILE)
    inputs.write_text("the saved inputs")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        check = run_repro(script, finding_id=3, verdict="confirmed", args=[str(inputs), str(outside), str(port)],
                          timeout_s=60)
        with pytest.raises(TimeoutError):
            listener.accept()  # nobody connected
    seen = json.loads(check.output_tail)
    assert check.agrees is True and seen["inputs"] == "the saved inputs"  # its own inputs are readable
    assert "SECRET123" not in seen["parent_environ"] and len(seen["pids"]) <= 3  # own PID namespace
    assert not outside.exists()  # inside, /tmp is a private tmpfs: the write landed nowhere the host sees
    assert seen["connect"].startswith("failed")


def test_without_bubblewrap_the_check_refuses_unless_told_no_sandbox(tmp_path: Path) -> None:
    from fuzz_core.sandbox import SandboxUnavailable

    script = tmp_path / "ok.py"
    script.write_text("import sys\nsys.exit(0)\n")
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        run_repro(script, finding_id=1, verdict="passed", bwrap=str(tmp_path / "missing-bwrap"))
    unsandboxed = run_repro(script, finding_id=1, verdict="passed", sandbox=False, bwrap=str(tmp_path / "missing"))
    assert unsandboxed.agrees is True
