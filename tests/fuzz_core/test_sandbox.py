"""Workers run inside bubblewrap: a hostile harness cannot read secrets, write outside its folder, reach the
network, outlive the pool or seed another campaign's compile cache, while an honest harness keeps its verdict.

The attacks run as trusted harness code (input_source "code") whose module-level code does the attack and
writes what it saw into its working directory (the worker's writable folder), where the test reads it. The pool runs in a separate parent process
that holds the secrets in its environment and a database URL on its command line, as `transfuzz` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fuzz_core import HarnessSpec, WorkerPool

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SECRETS = {"OPENAI_API_KEY": "sk-test-SECRET123", "GITHUB_TOKEN": "ghp_testSECRET456",
           "DATABASE_URL": "postgresql://tf:dbSECRET789@db.internal/tf", "SSH_AUTH_SOCK": "/tmp/ssh-SECRETsock/agent.1",
           "AWS_SECRET_ACCESS_KEY": "awsSECRETkey000", "KUBECONFIG": "/root/.kube/SECRETconfig",
           "NETRC": "/root/.SECRETnetrc"}
DB_ARG = "postgresql+psycopg://tf:argvSECRET321@127.0.0.1/tf"  # on the parent's command line, as --db

REPORT = '''
import json, os

def _report(name, seen):
    with open(os.path.join(os.getcwd(), "probe_" + name + ".json"), "w") as f:
        json.dump(seen, f)

def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("latin-1")
    except Exception as exc:
        return "<" + type(exc).__name__ + ">"

def _try(action):
    try:
        action()
        return "done"
    except Exception as exc:
        return "failed: " + type(exc).__name__ + ": " + str(exc)

def make_inputs(seed):
    return (torch.ones(3), torch.full((3,), 2.0)), {}
'''

READ_SECRETS = REPORT + '''
_procs = {pid: {"environ": _read("/proc/%s/environ" % pid), "cmdline": _read("/proc/%s/cmdline" % pid)}
          for pid in os.listdir("/proc") if pid.isdigit()}
_report("env", {"environ": dict(os.environ), "pid": os.getpid(), "ppid": os.getppid(), "procs": _procs,
                "parent_environ": _read("/proc/%d/environ" % os.getppid()),
                "parent_cmdline": _read("/proc/%d/cmdline" % os.getppid())})
'''

WRITE_OUTSIDE = REPORT + '''
import sqlite3, sys

def _sqlite():
    con = sqlite3.connect("@DB@")
    con.execute("CREATE TABLE pwned (x)")
    con.commit()

_report("write", {
    "sqlite": _try(_sqlite),
    "project_file": _try(lambda: open("@PROJECT@/pwned.txt", "w").write("x")),
    "venv": _try(lambda: open(os.path.join(sys.prefix, "pwned.pth"), "w").write("import os")),
    "system_tmp": _try(lambda: open("/tmp/@MARKER@", "w").write("x")),
    "own_home": _try(lambda: open(os.path.join(os.environ["HOME"], "mine.txt"), "w").write("x")),
    "own_folder": _try(lambda: open(os.path.join(os.getcwd(), "mine.txt"), "w").write("x")),
})
'''

OPEN_SOCKET = REPORT + '''
import socket

def _connect():
    with socket.create_connection(("127.0.0.1", @PORT@), timeout=3) as s:
        s.sendall(b"pwned")

_report("net", {"loopback": _try(_connect)})
'''

SEED_CACHE = REPORT + '''
def _seed(folder):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "pwned_kernel.py"), "w") as f:
        f.write("import os")

_report("cache", {"other_visible": os.path.exists("@OTHER@"), "other_campaign": _try(lambda: _seed("@OTHER@")),
                  "system_tmp": _try(lambda: _seed("@SYSTMP@")),
                  "own_cache_before": sorted(os.listdir(os.environ["TORCHINDUCTOR_CACHE_DIR"])),
                  "own_cache": _try(lambda: _seed(os.environ["TORCHINDUCTOR_CACHE_DIR"])),
                  "own_cache_dir": os.environ["TORCHINDUCTOR_CACHE_DIR"],
                  "own_cache_mode": os.stat(os.environ["TORCHINDUCTOR_CACHE_DIR"]).st_mode & 0o777})
'''

SETSID_CHILD = REPORT + '''
import subprocess, sys
_late_write = "import sys, time; time.sleep(@DELAY@); open(sys.argv[1], 'w').write('x')"
_child = subprocess.Popen([sys.executable, "-c", _late_write, os.path.join(os.getcwd(), "late_marker"), "@TOKEN@"],
                          start_new_session=True)
_report("setsid", {"child_pid": _child.pid})
'''

DRIVER = '''
import json, sys
from fuzz_core import HarnessSpec, WorkerPool
specs, out, root, sandbox = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4] == "1"
with WorkerPool(1, task_timeout_s=120, preload_opinfo=False, workdir=root, sandbox=sandbox) as pool:
    results = [pool.submit(HarnessSpec(**spec), max_executions=2).result().to_dict() for spec in specs]
json.dump(results, open(out, "w"))
'''


def _fill(code: str, **values: Any) -> str:
    for key, value in values.items():
        code = code.replace(f"@{key}@", str(value))
    return code


def _spec(code: str, **kw: Any) -> dict[str, Any]:
    return {"api": "torch.add", "input_source": "code", "code": code, **kw}


class _Listener:
    """A TCP listener on loopback that records every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


@dataclass
class AttackRun:
    results: list[dict[str, Any]]
    root: Path
    reports: dict[str, dict[str, Any]]
    project: Path
    db: Path
    db_digest: str
    tmp_marker: Path
    other_cache: Path
    system_cache: Path
    listener: _Listener


def _run_driver(specs: list[dict[str, Any]], workdir: Path, *, sandbox: bool) -> tuple[list[dict[str, Any]], Path]:
    root = workdir / "pool"
    (workdir / "specs.json").write_text(json.dumps(specs))
    env = {**os.environ, **SECRETS, "PYTHONPATH": str(PROJECT_ROOT)}
    done = subprocess.run([sys.executable, "-c", DRIVER, str(workdir / "specs.json"), str(workdir / "out.json"),
                           str(root), "1" if sandbox else "0", "--db", DB_ARG],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((workdir / "out.json").read_text()), root


def _reports(root: Path) -> dict[str, dict[str, Any]]:
    return {p.stem.removeprefix("probe_"): json.loads(p.read_text()) for p in root.glob("tf_worker*/home/probe_*.json")}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def attacks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AttackRun]:
    workdir = tmp_path_factory.mktemp("attacks")
    project = workdir / "project"
    project.mkdir()
    db = project / "transfuzz.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE findings (id INTEGER PRIMARY KEY)")
    tmp_marker = Path(tempfile.gettempdir()) / f"tf_escape_{uuid.uuid4().hex}"
    other_cache = workdir / "other_campaign" / "inductor_cache"
    other_cache.mkdir(parents=True, mode=0o700)
    system_cache = Path(tempfile.gettempdir()) / f"transfuzz_inductor_cache_{uuid.uuid4().hex}"
    listener = _Listener()
    specs = [_spec(READ_SECRETS),
             _spec(_fill(WRITE_OUTSIDE, DB=db, PROJECT=project, MARKER=tmp_marker.name)),
             _spec(_fill(OPEN_SOCKET, PORT=listener.port)),
             _spec(_fill(SEED_CACHE, OTHER=other_cache, SYSTMP=system_cache)),
             _spec(REPORT)]  # honest: torch.add eager vs eager
    digest = _digest(db)
    try:
        results, root = _run_driver(specs, workdir, sandbox=True)
        yield AttackRun(results, root, _reports(root), project, db, digest, tmp_marker, other_cache, system_cache,
                        listener)
    finally:
        listener.close()
        tmp_marker.unlink(missing_ok=True)
        if system_cache.exists():
            for child in system_cache.iterdir():
                child.unlink()
            system_cache.rmdir()


def _visible_text(run: AttackRun) -> str:
    """Everything the workers wrote or said: reports, logs, artifacts, results."""
    parts = [json.dumps(run.results)]
    for path in run.root.rglob("*"):
        if path.is_file():
            parts.append(path.read_bytes().decode("latin-1"))
    return "\n".join(parts)


def test_an_honest_harness_keeps_its_verdict_and_every_attack_harness_still_runs(attacks: AttackRun) -> None:
    assert [r["verdict"] for r in attacks.results] == ["passed"] * 5, [r["reason"] for r in attacks.results]
    assert set(attacks.reports) == {"env", "write", "net", "cache"}  # every attack ran and reported


def test_the_parents_environment_and_command_line_are_invisible(attacks: AttackRun) -> None:
    seen = attacks.reports["env"]
    assert str(seen["pid"]) in seen["procs"]  # the probe did list the processes it can see
    argvs = [p["cmdline"].split("\0") for p in seen["procs"].values()]
    assert not any("--db" in argv or any("WorkerPool(" in arg for arg in argv) for argv in argvs)  # not the parent
    assert len(seen["procs"]) <= 3  # bwrap's init, the worker, at most one helper
    assert not set(seen["environ"]) & set(SECRETS)
    text = _visible_text(attacks)
    for secret in [*SECRETS.values(), DB_ARG, "argvSECRET321"]:
        assert secret not in text


def test_writes_outside_the_workers_folder_fail(attacks: AttackRun) -> None:
    outcome = attacks.reports["write"]
    for action in ("sqlite", "project_file", "venv"):
        assert outcome[action].startswith("failed"), (action, outcome[action])
    assert outcome["own_home"] == "done" and outcome["own_folder"] == "done"
    assert _digest(attacks.db) == attacks.db_digest
    assert not (attacks.project / "pwned.txt").exists()
    assert not (Path(sys.prefix) / "pwned.pth").exists()
    assert not attacks.tmp_marker.exists()  # its /tmp is private: the write landed nowhere the host sees


def test_no_network_not_even_loopback(attacks: AttackRun) -> None:
    assert attacks.reports["net"]["loopback"].startswith("failed")
    assert attacks.listener.accepted == 0


def test_the_compile_cache_of_another_campaign_and_the_system_temp_dir_cannot_be_seeded(attacks: AttackRun) -> None:
    outcome = attacks.reports["cache"]
    assert outcome["other_visible"] is False
    # Inside, /tmp is a private tmpfs: the writes may "succeed" there, but nothing reaches the host's folders.
    assert not any(attacks.other_cache.iterdir()) and not attacks.system_cache.exists()
    # Its own cache: writable, private to its pool (0700, inside the pool's folder), and deleted when the pool
    # closed, so what it planted there is never read again (a later pool's cache: the tests below).
    own = Path(outcome["own_cache_dir"])
    assert outcome["own_cache"] == "done" and attacks.root in own.parents
    assert outcome["own_cache_mode"] == 0o700
    assert not own.exists()


def test_without_the_sandbox_the_same_probe_sees_the_secrets(tmp_path: Path) -> None:
    # The control: proves the probe above would notice a leak.
    results, root = _run_driver([_spec(READ_SECRETS)], tmp_path, sandbox=False)
    assert results[0]["verdict"] == "passed"
    seen = _reports(root)["env"]
    assert SECRETS["OPENAI_API_KEY"] in seen["parent_environ"] and "argvSECRET321" in seen["parent_cmdline"]
    assert not set(seen["environ"]) & set(SECRETS)  # the allow-list alone still keeps them out of os.environ


def _processes_with(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_setsid_child_dies_with_the_pool(tmp_path: Path) -> None:
    token, delay = f"tf-setsid-{uuid.uuid4().hex}", 10
    with WorkerPool(1, task_timeout_s=60, preload_opinfo=False, workdir=tmp_path) as pool:
        spawned = time.monotonic()
        result = pool.submit(HarnessSpec(**_spec(_fill(SETSID_CHILD, DELAY=delay, TOKEN=token))),
                             max_executions=2).result(timeout=120)
        assert result.verdict == "passed", result.reason
        assert _processes_with(token)  # the child is running, detached into its own session
    deadline = time.monotonic() + 120  # a hang guard, not a speed limit: a busy machine may reap slowly
    while _processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(token) == []
    time.sleep(max(0.0, spawned + delay + 1 - time.monotonic()))
    assert list(tmp_path.rglob("probe_setsid.json")) and not list(tmp_path.rglob("late_marker"))


def test_a_missing_or_broken_bwrap_refuses_to_start_and_says_how_to_install(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from fuzz_core.sandbox import SandboxUnavailable

    monkeypatch.setenv("TRANSFUZZ_BWRAP", str(tmp_path / "no-such-bwrap"))
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        WorkerPool(1, workdir=tmp_path / "a")
    broken = tmp_path / "broken-bwrap"
    broken.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    broken.chmod(0o755)
    with pytest.raises(SandboxUnavailable, match="No permissions to create new namespace"):
        WorkerPool(1, workdir=tmp_path / "b", bwrap=str(broken))
    assert WorkerPool(1, workdir=tmp_path / "c", sandbox=False).bwrap is None  # the explicit opt-out


@pytest.mark.compile
def test_torch_compile_with_inductor_and_gcc_works_inside_the_sandbox(tmp_path: Path) -> None:
    with WorkerPool(1, task_timeout_s=300, preload_opinfo=False, workdir=tmp_path) as pool:
        result = pool.submit(HarnessSpec(**_spec(REPORT, test_mode="compile:inductor")), max_executions=2).result()
        compiled = [p for p in pool.inductor_cache.rglob("*") if p.suffix in (".so", ".cpp")]
        assert pool.inductor_cache.stat().st_mode & 0o777 == 0o700 and tmp_path in pool.inductor_cache.parents
    assert result.verdict == "passed", result.reason
    assert compiled  # gcc ran inside the sandbox and wrote into the pool's private cache
    assert not pool.inductor_cache.exists()  # ... which is gone once the pool closes


CACHE_PROBE = REPORT + '''
_cache = os.environ["TORCHINDUCTOR_CACHE_DIR"]
_before = sorted(os.listdir(_cache))
os.makedirs(os.path.join(_cache, "fxgraph"), exist_ok=True)
with open(os.path.join(_cache, "fxgraph", "pwned_kernel.py"), "w") as f:
    f.write("raise SystemExit('poisoned')")
_report("cache_@RUN@", {"dir": _cache, "before": _before})
'''


def test_a_later_pool_in_the_same_folder_gets_a_fresh_empty_compile_cache(tmp_path: Path) -> None:
    # The CLI gives every campaign the same artifacts folder; what one campaign's worker plants in its compile
    # cache must not be there for the next one.
    seen = {}
    for run in ("first", "second"):
        with WorkerPool(1, task_timeout_s=120, preload_opinfo=False, workdir=tmp_path) as pool:
            result = pool.submit(HarnessSpec(**_spec(_fill(CACHE_PROBE, RUN=run))), max_executions=2).result()
            assert result.verdict == "passed", result.reason
        [report] = tmp_path.glob(f"tf_worker*/home/probe_cache_{run}.json")
        seen[run] = json.loads(report.read_text())
        assert not Path(seen[run]["dir"]).exists()  # deleted with its pool
    assert seen["first"]["before"] == [] and seen["second"]["before"] == []
    assert seen["first"]["dir"] != seen["second"]["dir"]
    assert not list(tmp_path.rglob("pwned_kernel.py"))


# Appended to every compiled wrapper module in the cache: the module's `call` then adds 1 to every output. A
# later compile of the same graph finds the module file already there and imports it (PyCodeCache), so an
# honest eager-vs-inductor harness that reads this cache disagrees with eager: a false finding.
POISON_CACHE = REPORT + '''
_POISON = """

_tf_honest_call = call
def call(args):
    out = _tf_honest_call(args)
    for t in out:
        if isinstance(t, torch.Tensor):
            t.add_(1.0)
    return out
"""
_poisoned = []
for _dirpath, _dirs, _files in os.walk(os.environ["TORCHINDUCTOR_CACHE_DIR"]):
    for _name in _files:
        _path = os.path.join(_dirpath, _name)
        if _name.endswith(".py") and "def call(" in open(_path).read():
            with open(_path, "a") as f:
                f.write(_POISON)
            _poisoned.append(_path)
_report("poison_@RUN@", {"poisoned": _poisoned})
'''


def _honest_compile(workdir: Path, cache: Path | None = None, poison: str | None = None) -> tuple[str, list[str]]:
    """One pool (one campaign run): the honest eager-vs-inductor harness, then (when `poison` names the run) a
    harness that poisons the pool's compile cache. Returns the honest verdict and the files poisoned."""
    honest = HarnessSpec(**_spec(REPORT, test_mode="compile:inductor"))
    with WorkerPool(1, task_timeout_s=300, preload_opinfo=False, workdir=workdir, inductor_cache=cache) as pool:
        verdict = pool.submit(honest, max_executions=2).result().verdict
        if poison is None:
            return verdict, []
        attack = pool.submit(HarnessSpec(**_spec(_fill(POISON_CACHE, RUN=poison))), max_executions=2).result()
        assert attack.verdict == "passed", attack.reason
    [report] = workdir.glob(f"tf_worker*/home/probe_poison_{poison}.json")
    return verdict, json.loads(report.read_text())["poisoned"]


@pytest.mark.compile
@pytest.mark.timeout(1200)  # three pools, two inductor compiles from nothing; a busy machine is slow at it
def test_a_poisoned_compile_cache_cannot_change_a_later_runs_verdict(tmp_path: Path) -> None:
    # Before caches were per pool, every campaign's pool used <artifacts>/inductor_cache. Run 1 uses that folder
    # and poisons it.
    old_cache = tmp_path / "inductor_cache"
    verdict, poisoned = _honest_compile(tmp_path, old_cache, poison="one")
    assert verdict == "passed" and poisoned
    # The control: a run that reads that cache again turns the honest harness's verdict, so the poison works
    # and the last check can see it.
    assert _honest_compile(tmp_path, old_cache)[0] != "passed"
    # A later run in the same artifacts folder with the default cache (fresh for its pool): the honest verdict.
    assert _honest_compile(tmp_path)[0] == "passed"
    assert {p.name for p in tmp_path.iterdir() if p.name.startswith("compile_cache_")} == set()  # all deleted
