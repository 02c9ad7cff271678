"""Run a report's own repro in the sandbox and read a verdict off the run (Note [Source re-check]).

The repro is issue text: it runs only inside the bubblewrap sandbox that ``export --check-repro`` uses
(agent/export/verify.py: a fresh ``python -I``, no network, its own namespaces, read-only system and
venv, an empty environment plus PATH and locale, rlimits, a wall-clock limit after which the whole
sandbox is killed). When the command runs with ``--no-sandbox``, or bubblewrap cannot start here, it is
not run at all and the reason is recorded; it is tried again by a later sandboxed fuzz.

What the run says, read simply and with its reason kept:
- an AssertionError raised by the script itself or by a testing helper (``torch.testing``, ``numpy.testing``,
  ``unittest``), a failing ``torch.autograd.gradcheck``/``gradgradcheck``, the script's own ``raise``
  statement, or an exit status the script gives with ``sys.exit(N)`` itself: it reproduces;
- exit 0 from a script with checks of its own (``assert``, an ``assert*`` call, ``gradcheck``, a ``raise``
  or ``sys.exit(N)`` under an ``if``): it does not reproduce;
- exit 0 from a script without checks: it decides only when the script printed exactly two values of the
  same size (numbers, lists, tensors) that can be compared as printed; otherwise "no verdict";
- any other error (an import missing, CUDA absent, an exception inside torch), a signal, or the time
  limit: "no verdict from the script", with what happened.
"""

from __future__ import annotations

import ast
import math
import os
import re
import signal
import subprocess
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from agent.export.verify import REPRO_LIMITS, repro_command
from agent.extract.codeblocks import code_blocks
from agent.text_safety import one_line, strip_control
from agent.transfer.source_recheck import ReproRun, record_repro_run, torch_version
from db.queries.source_recheck import SourceReport, source_reports
from db.store import Store
from fuzz_core.sandbox import SandboxUnavailable, require_bwrap, signal_name

REPRO_TIMEOUT_S = 60.0  # one report's repro; a longer one is "no verdict" (killed)
MIN_START_S = 5.0  # a repro is not started with less time than this left in the share
SHARE_OF_FUZZ_BUDGET = 0.2  # the fuzz stage gives its repro checks at most this part of its budget
SCRIPT_NAME = "report_repro.py"
NO_SANDBOX = "the command runs with --no-sandbox; a report's code runs only inside the bubblewrap sandbox"
NO_REPRO = "the report has no Python code block that imports torch"
_READ_TAIL = 64 * 1024
_STORED_TAIL = 2000
_REASON = 300

# Values as torch, numpy and Python print them: numbers, nan/inf, brackets, commas.
_NUMBER = r"[-+]?(?:nan|inf|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
_VALUE = re.compile(rf"[\s\[\](),]*{_NUMBER}(?:[\s\[\](),]+{_NUMBER})*[\s\[\](),]*", re.I)
_NUMBER_RE = re.compile(_NUMBER, re.I)
_WRAPPER = re.compile(r"^(?:tensor|array|Parameter containing:\s*tensor)\(", re.I)
_KEYWORDS = re.compile(r",\s*[A-Za-z_]+\s*=.*$", re.S)  # ", dtype=torch.float16)", ", grad_fn=<...>)"
_LABEL = re.compile(r"^[A-Za-z_][\w .()/\-]{0,40}?\s*[:=]\s*(?=\S)")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
_EXCEPTION = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?::\s?(?P<message>.*))?$")
_TESTING_FRAMES = ("/torch/testing/", "/numpy/testing/", "/unittest/")
# Calls that raise when their check fails (gradcheck raises GradcheckError unless told not to).
_CHECK_CALLS = ("gradcheck", "gradgradcheck")


def report_repro(body: str) -> str | None:
    """The report's own repro: its first fenced Python block that imports torch (as written), else None."""
    for block in code_blocks(body or ""):
        if block.is_python and block.tree is not None and _imports_torch(block.tree):
            return block.text
    return None


def _imports_torch(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch" and not node.level:
            return True
    return False


# --- reading the run ------------------------------------------------------------------------------------


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _exit_codes(tree: ast.Module) -> set[int]:
    """The literal non-zero statuses the script passes to sys.exit/exit/quit/os._exit."""
    codes = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node.func) in ("exit", "quit", "_exit") and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, int) and not isinstance(arg.value, bool) \
                    and arg.value != 0:
                codes.add(arg.value)
    return codes


def own_checks(tree: ast.Module | None) -> list[str]:
    """The checks a script makes of its own results: assert, assert* calls, raise / sys.exit(N) under an if."""
    if tree is None:
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            found.append("assert")
        elif isinstance(node, ast.Call) and (_call_name(node.func).lower().startswith("assert")
                                             or _call_name(node.func) in _CHECK_CALLS):
            found.append(_call_name(node.func))
        elif isinstance(node, ast.If):
            for inner in (n for branch in (node.body, node.orelse) for stmt in branch for n in ast.walk(stmt)):
                if isinstance(inner, ast.Raise):
                    found.append("raise under an if")
                elif isinstance(inner, ast.Call) and _call_name(inner.func) in ("exit", "_exit") and inner.args:
                    found.append("sys.exit under an if")
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class _Raised:
    name: str
    message: str
    file: str
    line: int


def _last_exception(stderr: str) -> _Raised | None:
    """The exception that ended the script: the last traceback's innermost frame and its header line."""
    start = stderr.rfind("Traceback (most recent call last):")
    if start < 0:
        return None
    frame: tuple[str, int] | None = None
    header: re.Match[str] | None = None
    seen_frame = False
    message: list[str] = []
    for line in stderr[start:].splitlines()[1:]:
        found = _FRAME.match(line)
        if found:
            frame, seen_frame, header, message = (found["file"], int(found["line"])), True, None, []
            continue
        if header is not None:
            message.append(line)
            continue
        if seen_frame and line and not line[0].isspace():
            header = _EXCEPTION.match(line)
            if header is None:
                return None
    if frame is None or header is None:
        return None
    text = " ".join([header["message"] or "", *message]).strip()
    return _Raised(header["name"], text, frame[0], frame[1])


def _source_line(code: str, number: int) -> str:
    lines = code.splitlines()
    return lines[number - 1].strip() if 0 < number <= len(lines) else ""


def printed_values(stdout: str) -> list[list[float]]:
    """The values the script printed, one list of numbers per printed value (labels such as "eager:" dropped)."""
    records: list[str] = []
    current: list[str] = []
    depth = 0
    for line in stdout.splitlines():
        current.append(line)
        depth += line.count("(") + line.count("[") - line.count(")") - line.count("]")
        if depth <= 0 or len(current) > 200:
            records.append("\n".join(current))
            current, depth = [], 0
    if current:
        records.append("\n".join(current))
    values = []
    for record in records:
        numbers = _value_of(record.strip())
        if numbers is not None:
            values.append(numbers)
    return values


def _value_of(text: str) -> list[float] | None:
    if not text or "..." in text or text.startswith("("):  # a summarised tensor; a tuple is mostly a shape
        return None
    label = _LABEL.match(text)
    if label and not _VALUE.fullmatch(text):
        text = text[label.end():]
    wrapper = _WRAPPER.match(text)
    if wrapper:
        text = _KEYWORDS.sub("", text[wrapper.end():]).rstrip()
        text = text[:-1] if text.endswith(")") and text.count(")") > text.count("(") else text
    if not _VALUE.fullmatch(text):
        return None
    return [float(n) for n in _NUMBER_RE.findall(text)]


def _close(a: float, b: float) -> bool:
    """Equal as printed: NaN equals NaN, infinities by sign, else within print rounding."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= 1e-4 + 1e-3 * max(abs(a), abs(b))


def compare_printed(stdout: str) -> tuple[bool, str] | None:
    """(differ, why) when the script printed exactly two values of one size; None when there is nothing to compare."""
    values = printed_values(stdout)
    if len(values) != 2 or len(values[0]) != len(values[1]) or not values[0]:
        return None
    first, second = values
    for index, (a, b) in enumerate(zip(first, second)):
        if not _close(a, b):
            where = f"element {index} of {len(first)}: " if len(first) > 1 else ""
            return True, f"it printed two values that differ ({where}{a:g} vs {b:g})"
    return False, f"it printed two values that agree ({len(first)} element{'s' if len(first) > 1 else ''})"


def judge(code: str, script: str, exit_code: int | None, stdout: str, stderr: str, *,
          timeout_s: float) -> tuple[str, str]:
    """(status, reason) of one run by the rules in the module docstring."""
    try:
        tree: ast.Module | None = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if exit_code is None:
        return "no_verdict", f"it ran past {timeout_s:g} s and was killed"
    if exit_code == 0:
        checks = own_checks(tree)
        if checks:
            return "does_not_reproduce", f"it ran clean and its own checks hold ({', '.join(checks[:3])})"
        compared = compare_printed(stdout)
        if compared is not None:
            differ, why = compared
            return ("reproduces" if differ else "does_not_reproduce"), why
        return "no_verdict", "it ran clean, with no check of its own and no two printed values to compare"
    raised = _last_exception(stderr)
    if raised is not None:
        in_script = raised.file in (script, str(Path(script).resolve())) or raised.file.endswith("/" + SCRIPT_NAME)
        short = raised.name.rsplit(".", 1)[-1]
        said = f"{short}: {raised.message}" if raised.message else short
        if short == "GradcheckError" or short == "AssertionError" and (
                in_script or any(part in raised.file for part in _TESTING_FRAMES)):
            where = "its assertion failed" if in_script else "a testing check failed"
            return "reproduces", f"{where} ({said})"
        if in_script and _source_line(code, raised.line).startswith("raise"):
            return "reproduces", f"it raised on its own check at line {raised.line} ({said})"
        place = f"line {raised.line} of the script" if in_script else "inside " + _module_of(raised.file)
        return "no_verdict", f"it raised {said} ({place})"
    ended = signal_name(exit_code, sandboxed=True)
    if tree is not None and exit_code in _exit_codes(tree):
        return "reproduces", f"it exited with status {exit_code} from its own sys.exit({exit_code})"
    return "no_verdict", f"it ended with {ended} and no traceback"


def _module_of(path: str) -> str:
    parts = Path(path).parts
    if "site-packages" in parts:
        parts = parts[parts.index("site-packages") + 1:]
    return "/".join(parts[-3:]) or "?"


# --- running it -----------------------------------------------------------------------------------------


def _tail(handle: IO[bytes]) -> str:
    handle.flush()
    size = handle.seek(0, os.SEEK_END)
    handle.seek(max(0, size - _READ_TAIL))
    return handle.read().decode("utf-8", errors="replace")


def run_report_repro(code: str, *, sandbox: bool, timeout_s: float = REPRO_TIMEOUT_S,
                     bwrap: str | None = None) -> ReproRun:
    """Run the report's repro in the sandbox; never without one (then it is not run and says why)."""
    version = torch_version()
    if not sandbox:
        return ReproRun(status="not_run", reason=NO_SANDBOX, torch=version, retry=True)
    try:
        tool = require_bwrap(bwrap)
    except SandboxUnavailable as exc:
        return ReproRun(status="not_run", reason=f"no sandbox here: {one_line(str(exc).split('. ')[0])}",
                        torch=version, retry=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="transfuzz-source-") as folder, \
            tempfile.TemporaryDirectory(prefix="transfuzz-repro-") as workdir, \
            tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        script = Path(folder) / SCRIPT_NAME
        script.write_text(code, encoding="utf-8")
        command, env = repro_command(script, [], workdir, tool)
        process = subprocess.Popen(command, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                   start_new_session=True, preexec_fn=REPRO_LIMITS.apply)
        try:
            exit_code: int | None = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            exit_code = None
        stdout, stderr = _tail(out), _tail(err)
        status, reason = judge(code, str(script.resolve()), exit_code, stdout, stderr, timeout_s=timeout_s)
    shown = strip_control((stdout[-_STORED_TAIL // 2:] + ("\n" if stdout and stderr else "") + stderr)[-_STORED_TAIL:],
                          keep_newlines=True)
    reason = one_line(reason)
    return ReproRun(status=status, reason=reason if len(reason) <= _REASON else reason[:_REASON - 1] + "…",
                    exit_code=exit_code, seconds=round(time.monotonic() - started, 3), output_tail=shown,
                    torch=version)


# --- the step of the fuzz stage -------------------------------------------------------------------------


@dataclass
class ReproCheckSummary:
    """What the fuzz stage's source-repro step did this time."""

    due: int = 0
    ran: int = 0
    reproduces: int = 0
    does_not_reproduce: int = 0
    no_verdict: int = 0
    not_run: int = 0
    left: int = 0  # due, but the step's share of the budget ran out first: tried again next time
    seconds: float = 0.0

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def repro_share_s(fuzz_budget_s: float) -> float:
    return SHARE_OF_FUZZ_BUDGET * fuzz_budget_s


def _due(report: SourceReport, version: str) -> bool:
    """Never run, or run on another torch, or not run for a reason that may have passed (no sandbox)."""
    repro = report.source_check.get("repro")
    if not isinstance(repro, dict):
        return True
    return bool(repro.get("retry")) or repro.get("torch") != version


def check_source_repros(store: Store, *, sandbox: bool, budget_s: float, workers: int = 1,
                        timeout_s: float = REPRO_TIMEOUT_S, bwrap: str | None = None) -> ReproCheckSummary:
    """Run the repro of every transferred report that is due, within `budget_s`, `workers` at a time."""
    started = time.monotonic()
    version = torch_version()
    summary = ReproCheckSummary()
    with store.session() as session:
        due = [r for r in source_reports(session) if _due(r, version)]
    summary.due = len(due)
    runnable: list[tuple[int, str]] = []
    for report in due:
        code = report_repro(report.body)
        if code is None:
            _store(store, report.pattern_id, ReproRun(status="not_run", reason=NO_REPRO, torch=version), summary)
        elif not sandbox:
            _store(store, report.pattern_id, run_report_repro(code, sandbox=False), summary)
        else:
            runnable.append((report.pattern_id, code))
    if runnable:
        try:
            tool: str | None = require_bwrap(bwrap)
        except SandboxUnavailable:
            tool = None
        if tool is None:  # one reason for all of them, none run
            for pattern_id, code in runnable:
                _store(store, pattern_id, run_report_repro(code, sandbox=True, bwrap=bwrap), summary)
        else:
            _run_within(store, runnable, summary, deadline=started + budget_s, workers=workers, timeout_s=timeout_s,
                        bwrap=tool)
    summary.seconds = round(time.monotonic() - started, 3)
    return summary


def _run_within(store: Store, runnable: list[tuple[int, str]], summary: ReproCheckSummary, *, deadline: float,
                workers: int, timeout_s: float, bwrap: str) -> None:
    queue = list(runnable)
    running: dict[Future[ReproRun], tuple[int, float]] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="source-repro") as pool:
        while queue or running:
            while queue and len(running) < max(1, workers) and deadline - time.monotonic() >= MIN_START_S:
                pattern_id, code = queue.pop(0)
                limit = min(timeout_s, deadline - time.monotonic())
                running[pool.submit(run_report_repro, code, sandbox=True, timeout_s=limit, bwrap=bwrap)] = (
                    pattern_id, limit)
            if not running:
                break
            done, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in done:
                pattern_id, limit = running.pop(future)
                run = future.result()
                if run.exit_code is None and run.status == "no_verdict" and limit < timeout_s:
                    summary.left += 1  # cut short by the share, not by its own limit: due again
                    continue
                summary.ran += 1
                _store(store, pattern_id, run, summary)
    summary.left += len(queue)


def _store(store: Store, pattern_id: int, run: ReproRun, summary: ReproCheckSummary) -> None:
    with store.session() as session:
        record_repro_run(session, pattern_id, run)
    setattr(summary, run.status, getattr(summary, run.status) + 1)
