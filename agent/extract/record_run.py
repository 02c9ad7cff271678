"""Run a report's repro under the recorder, inside the sandbox, and read back what it did (Note [Recorded runs]).

Note [Recorded runs]
The report's repro (its first fenced Python block that imports torch, as the source re-check takes it) is
issue text. It runs only inside the bubblewrap sandbox that ``export --check-repro`` and the source re-check
use (agent/export/verify.py: a fresh ``python -I``, no network, its own namespaces, read-only system and
venv, an empty environment plus PATH and locale, rlimits, the whole sandbox killed at the time limit). The
interpreter starts fuzz_core/record/run_script.py, which runs the script under the recorder; the fuzz_core
folder is mounted read-only for it, and the recording is written to the run's private folder. Under
``--no-sandbox`` or without bubblewrap nothing runs: the recording says "not_run" with the reason.

Statuses (``RecordRun.status``), each with a one-line reason:
- ``ok``: the script ran to its end (or ``sys.exit(0)``);
- ``raised``: it raised (the type, message and line are in the recording; a missing CUDA, a removed API,
  a failed assertion, a refused network connection all end here, the calls before kept);
- ``exit``: it exited with a non-zero status of its own;
- ``timeout``: the recorder's soft limit stopped it (a few seconds before the hard one);
- ``killed``: the hard limit killed the sandbox; the recording is the one written at the last flush;
- ``crashed``: the interpreter died on a signal; the recording, if any, is the last flush;
- ``invalid``: the recording file is missing, too large or malformed (the reason says which);
- ``not_run``: no sandbox (or no code), so nothing ran.
Every status but ``not_run`` and ``invalid`` comes with the calls recorded before it.
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from agent.extract.recording import MAX_RECORDING_BYTES, Recording, RecordingRejected, parse_recording
from agent.text_safety import one_line, strip_control
from fuzz_core.record import EMULABLE, PACKAGE_DIR, RECORDER_VERSION, RUNNER
from fuzz_core.sandbox import SandboxUnavailable, require_bwrap, signal_name

RECORD_TIMEOUT_S = 60.0  # one report's recorded run (hard limit; an inductor compile takes a while)
SOFT_MARGIN_S = 3.0  # the recorder stops the script this long before the hard limit, to write its file
SCRIPT_NAME = "report_repro.py"
OUT_NAME = "recording.json"
NO_SANDBOX = "the command runs with --no-sandbox; a report's code runs only inside the bubblewrap sandbox"
_TAIL = 2000
DEVICE_NAMES = {"cuda": "CUDA", "mps": "MPS"}
_READ_TAIL = 64 * 1024


@dataclass
class RecordRun:
    """One recorded run: how it went, and the recording (None when nothing could be read back)."""

    status: str
    reason: str
    recording: Recording | None = None
    exit_code: int | None = None
    seconds: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    code_sha256: str = ""
    recorder: str = RECORDER_VERSION

    @property
    def retry(self) -> bool:
        """Whether a later run may do better: nothing ran for want of a sandbox."""
        return self.status == "not_run" and self.reason != NO_CODE


NO_CODE = "the report has no Python code block that imports torch"


def code_hash(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", errors="replace")).hexdigest()


def _tail(handle: IO[bytes]) -> str:
    handle.flush()
    size = handle.seek(0, os.SEEK_END)
    handle.seek(max(0, size - _READ_TAIL))
    text = handle.read().decode("utf-8", errors="replace")
    return strip_control(text[-_TAIL:], keep_newlines=True)


def _read(path: Path) -> tuple[Recording | None, str | None]:
    """The recording at `path` and None, or None and why it cannot be used."""
    try:
        size = path.stat().st_size
    except OSError:
        return None, "the recorder wrote no recording"
    if size > MAX_RECORDING_BYTES:
        return None, f"the recording is larger than {MAX_RECORDING_BYTES // (1024 * 1024)} MiB"
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_RECORDING_BYTES + 1)
        return parse_recording(data), None
    except RecordingRejected as exc:
        return None, str(exc)
    except OSError as exc:
        return None, f"the recording cannot be read: {exc.strerror or exc}"


def _status(recording: Recording | None, exit_code: int | None, killed: bool) -> tuple[str, str]:
    if killed:
        return "killed", "it ran past the time limit and the sandbox was killed"
    if recording is not None:
        raised = recording.exception
        if recording.status == "timeout":
            where = f" at line {raised.line}" if raised is not None and raised.line else ""
            return "timeout", f"the recorder stopped it at its time limit{where}"
        if recording.status == "raised" and raised is not None:
            where = f" at line {raised.line}" if raised.line else f" in {raised.where}" if raised.where else ""
            message = f": {raised.message}" if raised.message else ""
            return "raised", one_line(f"it raised {raised.type.rsplit('.', 1)[-1]}{where}{message}")[:300]
        if recording.status == "exit":
            return "exit", f"it exited with status {recording.exit_code}"
        if recording.status == "ok":
            return "ok", "it ran to its end"
    if exit_code is not None and exit_code != 0:
        return "crashed", f"it ended with {signal_name(exit_code, sandboxed=True)} before the recorder finished"
    return "crashed", "the recorder did not finish"


def devices_wanted(run: RecordRun) -> tuple[str, ...]:
    """The devices the run failed for want of, that the recorder can move to the CPU (Note [CUDA on the CPU]
    in fuzz_core/record/recorder.py); none when it did not fail so."""
    recording = run.recording
    if recording is None or run.status not in ("raised", "exit") or recording.emulated:
        return ()
    raised = recording.exception
    texts = [" ".join([raised.message, raised.where]).lower()] if raised is not None else []
    texts += [c.error.lower() for c in recording.calls[-5:] if c.error is not None]
    return tuple(d for d in EMULABLE if any(re.search(rf"(?<![a-z]){d}(?![a-z])", text) for text in texts))


def record_repro(code: str, *, sandbox: bool, timeout_s: float = RECORD_TIMEOUT_S, bwrap: str | None = None,
                 devices_on_cpu: bool = True, deadline: float | None = None) -> RecordRun:
    """Run `code` under the recorder in the sandbox; never without one (then it is not run and says why).

    When the run fails for want of CUDA or MPS and `devices_on_cpu` holds, it is run again with that device
    moved to the CPU (Note [CUDA on the CPU]) if time is left before `deadline` (time.monotonic()); that run is
    returned, its reason saying what the first one did.
    """
    first = _record_once(code, sandbox=sandbox, timeout_s=timeout_s, bwrap=bwrap, emulate=())
    wanted = devices_wanted(first) if devices_on_cpu else ()
    if not wanted:
        return first
    left = timeout_s if deadline is None else min(timeout_s, deadline - time.monotonic())
    if left < 5.0:
        return first
    second = _record_once(code, sandbox=sandbox, timeout_s=left, bwrap=bwrap, emulate=wanted)
    if second.recording is None:
        return first
    named = " and ".join(DEVICE_NAMES[d] for d in wanted)
    second.reason = one_line(f"{named} is missing here ({first.reason}); run again with {named} on the CPU: "
                             f"{second.reason}")[:400]
    second.seconds = round(first.seconds + second.seconds, 3)
    return second


def _record_once(code: str, *, sandbox: bool, timeout_s: float, bwrap: str | None,
                 emulate: tuple[str, ...]) -> RecordRun:
    from agent.export.verify import REPRO_LIMITS, repro_command

    digest = code_hash(code)
    if not sandbox:
        return RecordRun(status="not_run", reason=NO_SANDBOX, code_sha256=digest)
    try:
        tool = require_bwrap(bwrap)
    except SandboxUnavailable as exc:
        return RecordRun(status="not_run", reason=f"no sandbox here: {one_line(str(exc).split('. ')[0])}",
                         code_sha256=digest)
    started = time.monotonic()
    # the recorder's own limit, as a wall-clock deadline: the sandbox's start-up and torch's import count too
    soft_deadline = time.time() + max(1.0, timeout_s - SOFT_MARGIN_S)
    with tempfile.TemporaryDirectory(prefix="transfuzz-record-") as folder, \
            tempfile.TemporaryDirectory(prefix="transfuzz-recording-") as workdir, \
            tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        script = Path(folder) / SCRIPT_NAME
        script.write_text(code, encoding="utf-8")
        recording_path = Path(workdir) / OUT_NAME
        argv = [str(script.resolve()), str(recording_path), f"{soft_deadline:.3f}"]
        if emulate:
            argv.append(f"emulate:{','.join(emulate)}")
        command, env = repro_command(RUNNER, argv, workdir, tool, readonly=[PACKAGE_DIR])
        process = subprocess.Popen(command, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                   start_new_session=True, preexec_fn=REPRO_LIMITS.apply)
        killed = False
        try:
            exit_code: int | None = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            exit_code, killed = None, True
        recording, problem = _read(recording_path)
        stdout, stderr = _tail(out), _tail(err)
    seconds = round(time.monotonic() - started, 3)
    if recording is None:
        status, reason = ("killed", f"it ran past {timeout_s:g} s and was killed; {problem}") if killed \
            else ("invalid", problem or "no recording")
        return RecordRun(status=status, reason=one_line(reason)[:300], exit_code=exit_code, seconds=seconds,
                         stdout_tail=stdout, stderr_tail=stderr, code_sha256=digest)
    status, reason = _status(recording, exit_code, killed)
    return RecordRun(status=status, reason=reason, recording=recording, exit_code=exit_code, seconds=seconds,
                     stdout_tail=stdout, stderr_tail=stderr, code_sha256=digest)
