"""The extract stage's recorded runs: each due report's repro, run once under the recorder, stored with the issue.

Before the issues are triaged, every due issue whose report has a repro (its first fenced Python block that
imports torch) gets a recording (agent/extract/record_run.py, Note [Recorded runs]) unless one is stored for the
same code, recorder and torch. Runs are sandboxed or not made: under ``--no-sandbox`` or without bubblewrap the
row says ``not_run`` with the reason and the issue is tried again next time. Each run has its time limit and
all of them share one budget; what the budget does not reach stays due (no row). The facts read from each
recording (agent/extract/recorded.py) go to the extractor beside the issue's text.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agent.extract.record_run import NO_SANDBOX, RECORD_TIMEOUT_S, RecordRun, code_hash, record_repro
from agent.extract.recorded import RecordedFacts, derive
from agent.extract.recording import Recording
from fuzz_core.record import RECORDER_VERSION
from fuzz_core.sandbox import SandboxUnavailable, require_bwrap

MIN_START_S = 5.0  # a run is not started with less of the budget left than this
MAX_STORED_BYTES = 1024 * 1024  # a stored recording keeps its first and last calls within this
_CHUNK = 100


@dataclass
class RecordingOptions:
    """How the extract stage records: only sandboxed, `timeout_s` per report, `budget_s` for all of them."""

    sandbox: bool = True
    budget_s: float = 120.0
    timeout_s: float = RECORD_TIMEOUT_S
    workers: int = 1
    bwrap: str | None = None


class RecordingSummary(BaseModel):
    """What the recording step of one extract run did."""

    with_repro: int = 0  # due issues whose report has a repro
    reused: int = 0  # a stored recording answered for the same code, recorder and torch
    ran: int = 0
    not_run: int = 0  # no sandbox: stored with the reason, tried again next time
    left: int = 0  # the budget ran out first: nothing stored, tried again next time
    statuses: dict[str, int] = Field(default_factory=dict)  # of the runs made now
    reason: str | None = None  # why nothing ran, when nothing could
    seconds: float = 0.0


def _torch_version() -> str:
    import torch

    return str(torch.__version__)


MAX_REPRO_CHARS = 20000
# Names real repros use without importing them (the scanner assumes the same aliases: agent/extract/scan.py)
_USUAL_IMPORTS = {"torch": "import torch", "nn": "import torch.nn as nn", "F": "import torch.nn.functional as F",
                  "np": "import numpy as np"}


def repro_of(body: str, comments: Sequence[str] = ()) -> str | None:
    """The report's own repro, as it would be run: Note [The repro as a report spreads it].

    The first fenced Python block that imports torch (what the source re-check runs, see
    agent/transfer/source_repro.py), with the Python blocks after it that continue it; else a
    block pasted without a fence; else a fenced block that uses torch without importing it.
    A description without one takes the first comment that has one: a maintainer's reduced repro.
    """
    found = _repro_in(body)
    return found if found is not None else next(
        (code for code in (_repro_in(text) for text in comments if text) if code is not None), None)


def _repro_in(body: str) -> str | None:
    from agent.extract.codeblocks import code_blocks, unfenced_code

    blocks = [b for b in code_blocks(body or "") if b.is_python and b.tree is not None]
    start = next((i for i, b in enumerate(blocks) if _imports_torch(b.tree)), None)
    if start is not None:
        parts = [blocks[start].text]
        for block in blocks[start + 1:]:
            if _imports_torch(block.tree):  # a second, standalone script: a variant or a workaround
                break
            parts.append(block.text)
        return _bounded("\n\n".join(part.strip("\n") for part in parts))
    pasted = [b for b in unfenced_code(body or "") if _imports_torch(b.tree)]
    if pasted:
        return _bounded(pasted[0].text)
    using = [b for b in blocks if _uses_torch(b.tree)]
    if using:
        code = "\n\n".join(b.text.strip("\n") for b in using)
        missing = [line for name, line in _USUAL_IMPORTS.items() if _names_used(using, name)]
        return _bounded("\n".join(missing) + "\n\n" + code)
    return None


# Note [The repro as a report spreads it]
# Reporters split a repro over several fenced blocks with prose and printed output between them ("first the
# inputs", "then the call"); the printed output is not Python (codeblocks.py tells them apart), so the Python
# blocks after the first one that imports torch are its continuation, up to a block that imports torch again
# (a second script: a smaller variant, a workaround). Old reports paste the script with no fence, and short
# ones leave out ``import torch``; the usual imports are put back for the names the code uses (torch, nn, F,
# np). What is run is the report's own code, joined: nothing is rewritten, and it runs only in the sandbox.


def _bounded(code: str) -> str | None:
    code = code.strip("\n")
    return code[:MAX_REPRO_CHARS] + "\n" if code else None


def _imports_torch(tree: Any) -> bool:
    import ast

    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch" and not node.level:
            return True
    return False


def _uses_torch(tree: Any) -> bool:
    import ast

    return any(isinstance(node, ast.Name) and node.id == "torch" for node in ast.walk(tree))


def _names_used(blocks: list[Any], name: str) -> bool:
    import ast

    for block in blocks:
        for node in ast.walk(block.tree):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                return True
            if isinstance(node, ast.Import | ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
                return False
    return False


def stored_form(recording: Recording, max_bytes: int = MAX_STORED_BYTES) -> dict[str, Any]:
    """The recording as JSON for the database, keeping its first and last calls when it is larger than max_bytes."""
    data = recording.model_dump(mode="json", exclude_defaults=True)
    data["format"], data["status"] = recording.format, recording.status
    size = len(str(data))
    calls = data.get("calls") or []
    if size <= max_bytes or len(calls) < 4:
        return data
    keep = max(2, int(len(calls) * max_bytes / size) // 2)
    data["calls"] = calls[:keep] + calls[-keep:]
    data["calls_dropped"] = recording.calls_dropped + len(calls) - 2 * keep
    return data


def facts_of_run(run: RecordRun) -> RecordedFacts | None:
    """What the extractor reads of one recorded run (None when nothing was recorded)."""
    if run.recording is None:
        return None
    try:
        return derive(run.recording, run.status)
    except Exception as exc:  # noqa: BLE001 - a reader bug must not lose the extraction
        return RecordedFacts(run_status=run.status, evidence=[f"reading the recording failed: {type(exc).__name__}"])


def _values(run: RecordRun, facts: RecordedFacts | None, version: str) -> Any:
    from db.queries.recordings import RecordingValues

    tail = (run.stdout_tail[-1000:] + ("\n" if run.stdout_tail and run.stderr_tail else "") + run.stderr_tail[-1000:])
    return RecordingValues(code_sha256=run.code_sha256, recorder_version=run.recorder, torch_version=version,
                           status=run.status, reason=run.reason, exit_code=run.exit_code, seconds=run.seconds,
                           recording=stored_form(run.recording) if run.recording is not None else {},
                           facts=facts.model_dump(mode="json") if facts is not None else {},
                           output_tail=tail.replace("\x00", ""))


def _save(store: Any, issue_id: int, run: RecordRun, version: str) -> RecordedFacts | None:
    from db.queries.recordings import save_recording

    facts = facts_of_run(run)
    with store.session() as session:
        save_recording(session, issue_id, _values(run, facts, version))
    return facts


def record_issues(store: Any, issue_ids: list[int], options: RecordingOptions) -> tuple[dict[int, RecordedFacts],
                                                                                       RecordingSummary]:
    """Recorded facts for the given issues (stored or made now), and what was done."""
    from db.queries.extraction import load_issues
    from db.queries.recordings import get_recording, is_current

    started = time.monotonic()
    version = _torch_version()
    summary = RecordingSummary()
    facts: dict[int, RecordedFacts] = {}
    due: list[tuple[int, str]] = []
    for start in range(0, len(issue_ids), _CHUNK):
        with store.session() as session:
            for issue in load_issues(session, issue_ids[start:start + _CHUNK]):
                code = repro_of(issue.body, [c.get("body") or "" for c in issue.comments or []])
                if code is None:
                    continue
                summary.with_repro += 1
                stored = get_recording(session, issue.id)
                if is_current(stored, code_sha256=code_hash(code), recorder_version=RECORDER_VERSION,
                              torch_version=version):
                    summary.reused += 1
                    try:
                        facts[issue.id] = RecordedFacts.model_validate(stored.values.facts)  # type: ignore[union-attr]
                    except ValidationError:
                        pass
                    continue
                due.append((issue.id, code))
    if due:
        _run_due(store, due, options, summary, facts, version, deadline=started + options.budget_s)
    summary.seconds = round(time.monotonic() - started, 3)
    return facts, summary


def _run_due(store: Any, due: list[tuple[int, str]], options: RecordingOptions, summary: RecordingSummary,
             facts: dict[int, RecordedFacts], version: str, *, deadline: float) -> None:
    tool: str | None = None
    reason: str | None = NO_SANDBOX if not options.sandbox else None
    if reason is None:
        try:
            tool = require_bwrap(options.bwrap)
        except SandboxUnavailable:
            tool = None
    if tool is None:  # one reason for all of them, none run
        for issue_id, code in due:
            run = record_repro(code, sandbox=options.sandbox, bwrap=options.bwrap)
            _save(store, issue_id, run, version)
            summary.not_run += 1
            summary.reason = run.reason
        return
    queue = list(due)
    running: dict[Future[RecordRun], tuple[int, float]] = {}
    workers = max(1, options.workers)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="record") as pool:
        while queue or running:
            while queue and len(running) < workers and deadline - time.monotonic() >= MIN_START_S:
                issue_id, code = queue.pop(0)
                limit = min(options.timeout_s, deadline - time.monotonic())
                running[pool.submit(record_repro, code, sandbox=True, timeout_s=limit, bwrap=tool,
                                    deadline=deadline)] = (issue_id, limit)
            if not running:
                break
            done, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in done:
                issue_id, limit = running.pop(future)
                run = future.result()
                if run.status == "killed" and limit < options.timeout_s:
                    summary.left += 1  # cut short by the budget, not by its own limit: due again
                    continue
                summary.ran += 1
                summary.statuses[run.status] = summary.statuses.get(run.status, 0) + 1
                found = _save(store, issue_id, run, version)
                if found is not None:
                    facts[issue_id] = found
    summary.left += len(queue)
    if summary.left and not summary.ran:
        summary.reason = f"the recording budget of {options.budget_s:g} s was spent"
