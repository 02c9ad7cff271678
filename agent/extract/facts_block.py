"""The recorded facts of a report's repro as the LLM prompts show them: a structured data block beside the text.

Note [Recorded facts in the prompt]
When the report's code ran under the recorder (agent/extract/record_stage.py), the triage and pattern prompts
get what ran beside what was written, in a ``<recorded>`` block: how the run ended, the public ops it called
(in order), the modes seen around them, how the script compared its results, whether they diverged and the
first op that did, the devices the run needed and this machine lacks, the pattern parts the recording points
at, and the lines the script printed. The input is small and typed (``RecordedFactsInput``): the extract
stage passes the ``RecordedFacts`` it read (agent/extract/recorded.py) or nothing; with nothing the block
says the code was not run, so a model never mistakes a missing recording for a clean run.

Everything in it came from running untrusted code, so it is data like the issue text: each value is one
line with control characters removed and a length cap, printed lines are quoted with a ``| `` prefix so no
line can pose as a field, counts are capped, and the prompt renderer escapes the block's tags inside it
(Note [Data blocks] in agent/llm/prompts.py).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

NOT_RUN = "none: the report's code was not run"
MAX_OPS = 40
MAX_PRINTED = 20
MAX_EVIDENCE = 8
MAX_LINE = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]|[\ud800-\udfff]")


def _line(value: Any, limit: int = MAX_LINE) -> str:
    text = _CONTROL.sub(" ", str(value)).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


class RecordedFactsInput(BaseModel):
    """What the prompt block shows; the fields of agent/extract/recorded.py's RecordedFacts it reads, and printed lines."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    run_status: str
    calls: int = 0
    ran: list[str] = Field(default_factory=list)
    modes_seen: list[str] = Field(default_factory=list)
    compared: str | None = None
    diverged: bool | None = None
    first_divergence: str | None = None
    device_only: list[str] = Field(default_factory=list)
    api: str | None = None
    kind: str | None = None
    reference_mode: str | None = None
    test_mode: str | None = None
    evidence: list[str] = Field(default_factory=list)
    printed: list[str] = Field(default_factory=list)


def facts_input(recorded: Any) -> RecordedFactsInput | None:
    """The block's input from a RecordedFacts (or its JSON, or a dict); None when there is none or it does not fit."""
    if recorded is None or recorded == "":
        return None
    try:
        if isinstance(recorded, RecordedFactsInput):
            return recorded
        if isinstance(recorded, str | bytes):
            return RecordedFactsInput.model_validate_json(recorded)
        if isinstance(recorded, BaseModel):
            return RecordedFactsInput.model_validate(recorded.model_dump(mode="json"))
        return RecordedFactsInput.model_validate(recorded)
    except (ValidationError, ValueError):
        return None


def _yes_no(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "no")


def facts_block(recorded: Any, printed: list[str] | None = None) -> str:
    """The ``<recorded>`` block's text for one report (NOT_RUN when its code was not run)."""
    facts = facts_input(recorded)
    if facts is None:
        return NOT_RUN
    lines = [f"run: {_line(facts.run_status, 40)} ({facts.calls} torch calls)"]
    ops = facts.ran[:MAX_OPS]
    if ops:
        more = f" (+{len(facts.ran) - len(ops)} more)" if len(facts.ran) > len(ops) else ""
        lines.append("ops ran, in order: " + _line(", ".join(ops), 2000) + more)
    if facts.modes_seen:
        lines.append("modes seen: " + _line(", ".join(facts.modes_seen)))
    if facts.compared:
        lines.append(f"compared by: {_line(facts.compared)}; values differ: {_yes_no(facts.diverged)}")
    if facts.first_divergence:
        lines.append(f"first op whose results differ: {_line(facts.first_divergence)}")
    if facts.device_only:
        lines.append("needed a device this machine lacks: " + _line(", ".join(facts.device_only)))
    if facts.api:
        lines.append(f"op under test (recorded): {_line(facts.api)}")
    if facts.kind:
        lines.append(f"kind (recorded): {_line(facts.kind, 40)} ({_line(facts.reference_mode or 'eager', 40)} vs "
                     f"{_line(facts.test_mode or '?', 40)})")
    for item in facts.evidence[:MAX_EVIDENCE]:
        lines.append("evidence: " + _line(item))
    shown = [*(facts.printed or []), *(printed or [])][-MAX_PRINTED:]
    if shown:
        lines.append("printed (last lines):")
        lines += ["| " + _line(text) for text in shown]
    return "\n".join(lines)
