"""The LLM transfer check: a model may veto a ranked candidate and adapt its trigger.

A failed call (bad output after the repair round, a transport error) keeps the candidate as
ranked: the check can only remove noise, never lose a candidate by accident. A spent budget or
an endpoint that is down stops the stage instead (the pattern stays due), and an answer that
omits adapted_trigger keeps the ranked trigger.
"""

from __future__ import annotations

import json
from typing import Any

from agent.patterns import BugPattern
from agent.transfer.rank import RankedCandidate
from agent.transfer.stage import CandidateCheck


def _semantics_text(api: str) -> str:
    from agent.extract import semantics_for

    try:
        return json.dumps(semantics_for(api).model_dump(mode="json"), indent=1)
    except Exception:
        return json.dumps({"api": api})


def make_check(backend: Any) -> CandidateCheck:
    from agent.llm.errors import STAGE_STOPPING_ERRORS, LlmConfigError, LlmError
    from agent.llm.schemas import TransferCheck

    def check(pattern: BugPattern, candidate: RankedCandidate) -> tuple[bool, str, dict | None]:
        variables = {
            "pattern_formal": pattern.to_formal(),
            "source_semantics": _semantics_text(pattern.api),
            "target_api": candidate.target_api,
            "target_semantics": _semantics_text(candidate.target_api),
        }
        try:
            verdict, _record = backend.structured("transfer_check", variables, TransferCheck)
        except (*STAGE_STOPPING_ERRORS, LlmConfigError):
            raise
        except LlmError as exc:
            return True, f"LLM check failed, kept as ranked ({type(exc).__name__})", None
        adapted = verdict.adapted_trigger
        return verdict.keep, verdict.reason, adapted.model_dump() if adapted is not None else None

    return check

