"""Input descriptions written by an LLM for APIs that OpInfo and the signature generator cannot feed.

The model answers the `harness_inputs` step with a HarnessInputs object: typed data checked
against fuzz_core's vocabularies and bounds (Note [Described inputs]). Nothing the model writes
is ever executed; an answer that does not validate, repair round included, is rejected with its
reason so the harness stage can record it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent.patterns import BugPattern

MAX_REASON = 600


@dataclass(frozen=True)
class DescribedInputs:
    """The outcome of one ask: a description to store, or why there is none."""

    inputs: dict[str, Any] | None = None  # fuzz_core InputDescription.to_dict(), stored as the spec's `inputs`
    rejected: str | None = None  # the model answered, but not with a valid description
    unavailable: str | None = None  # no answer at all (endpoint, timeout, token budget)


InputWriter = Callable[[BugPattern, str, dict[str, Any]], DescribedInputs]


def rejection_reason(attempts: list[dict[str, Any]], fallback: str) -> str:
    """The last failed attempt's validation errors as one line: `field.path: message; …`."""
    for attempt in reversed(attempts):
        error = str(attempt.get("error") or "")
        if not error:
            continue
        try:  # pydantic's error list, alone or after the backend's repair sentence
            errors = json.loads(error[error.index("["):])
        except ValueError:
            return one_line(error)
        if isinstance(errors, list) and errors and all(isinstance(e, dict) for e in errors):
            parts = []
            for e in errors[:4]:
                where = ".".join(str(p) for p in e.get("loc", ()))
                message = str(e.get("msg", "")).removeprefix("Value error, ")  # our checks name their field
                parts.append(f"{where}: {message}" if where else message)
            return one_line("; ".join(parts))
        return one_line(error)
    return one_line(fallback)


def one_line(text: str) -> str:
    """Model-influenced text (field names come from the answer) as one printable, bounded line."""
    return "".join(ch if ch.isprintable() else " " for ch in text)[:MAX_REASON]


def make_input_writer(backend: Any, semantics: Callable[[str], str] | None = None) -> InputWriter:
    """A writer asking the backend's `harness_inputs` step for one target's input description."""
    from agent.llm.errors import LlmError, LlmOutputError
    from agent.llm.schemas import HarnessInputs

    def describe(api: str) -> str:
        if semantics is not None:
            return semantics(api)
        from agent.extract import semantics_for

        try:
            return json.dumps(semantics_for(api).model_dump(mode="json"), indent=1)
        except Exception:  # no semantics for this API: the model gets its name only
            return json.dumps({"api": api})

    def write(pattern: BugPattern, target_api: str, trigger: dict[str, Any]) -> DescribedInputs:
        variables = {
            "target_api": target_api,
            "target_semantics": describe(target_api),
            "pattern_formal": pattern.to_formal(),
            "trigger": json.dumps(trigger, sort_keys=True),
        }
        try:
            answer, _record = backend.structured("harness_inputs", variables, HarnessInputs)
        except LlmOutputError as exc:
            return DescribedInputs(rejected=rejection_reason(exc.attempts, str(exc)))
        except LlmError as exc:
            return DescribedInputs(unavailable=one_line(f"{type(exc).__name__}: {exc}"))
        return DescribedInputs(inputs=answer.to_description().to_dict())

    return write
