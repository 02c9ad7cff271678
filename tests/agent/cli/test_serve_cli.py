"""`transfuzz serve` through the real CLI: a missing SQLite file and a busy port are usage errors with one clear line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from db.store import open_store

ROOT = Path(__file__).resolve().parents[3]


def _serve(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TRANSFUZZ_DB_URL", "TRANSFUZZ_REVIEW_TOKEN")}
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_serve_refuses_a_sqlite_path_that_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "transfuzz.db"
    with socket.socket() as probe:  # a free port, so only the database can be the reason to stop
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = _serve("--db", f"sqlite:///{missing}", "serve", "--port", str(port))
    assert result.returncode == 2, result.stderr
    assert f"no database at {missing}" in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr
    assert not missing.exists() and not missing.parent.exists()  # nothing created


def test_serve_names_the_busy_port_and_how_to_pick_another(tmp_path: Path) -> None:
    db = tmp_path / "review.db"
    open_store(f"sqlite:///{db}").close()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        result = _serve("--db", f"sqlite:///{db}", "serve", "--host", "127.0.0.1", "--port", str(port))
    text = " ".join(result.stderr.split())
    assert result.returncode == 2, result.stderr
    assert f"port {port} on 127.0.0.1 is busy" in text
    assert "--port" in text and "--port 0" in text
    assert "Traceback" not in result.stderr and "Errno" not in result.stderr


def test_serve_answers_on_the_socket_it_bound(tmp_path: Path) -> None:
    """The socket bound up front is the one uvicorn serves: --port 0 prints the real port, which answers."""
    import httpx

    db = tmp_path / "review.db"
    open_store(f"sqlite:///{db}").close()
    env = {k: v for k, v in os.environ.items() if k not in ("TRANSFUZZ_DB_URL", "TRANSFUZZ_REVIEW_TOKEN")}
    process = subprocess.Popen([sys.executable, "-m", "agent.cli", "--db", f"sqlite:///{db}", "serve", "--port", "0"],
                               cwd=ROOT, env=env, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # blocks until the server has bound and started (or died)
        assert line.startswith("transfuzz serve: http://127.0.0.1:"), line + process.stderr.read()
        base = line.split()[2].removesuffix("/queue")
        assert httpx.get(f"{base}/api/findings", timeout=30).json()["items"] == []
    finally:
        process.terminate()
        process.wait(timeout=60)
