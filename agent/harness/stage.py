"""The harness stage: every proposed candidate (and each pattern's source API) gets a spec.

Each harness is its own short transaction, and the LLM is asked between them with no session
open: on SQLite the LLM cache writes from its own session, which a transaction held across the
loop would lock out ("database is locked"); a crash mid-stage keeps every harness already made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent.harness.generate import build_spec
from agent.harness.llm_inputs import DescribedInputs, InputWriter
from agent.patterns import BugPattern, FormalParseError, parse_formal
from db.queries import transfer as q
from db.store import Store
from fuzz_core.api_names import ApiRejected

REJECTED_NOTE = "LLM input description rejected"
UNAVAILABLE_NOTE = "LLM input description unavailable"


@dataclass
class HarnessSummary:
    harnesses: int = 0
    skipped: int = 0
    llm_inputs: int = 0  # harnesses whose inputs an LLM described
    llm_inputs_rejected: int = 0  # answers turned away (reason on the candidate's rationale)
    llm_inputs_unavailable: int = 0  # no answer (endpoint, timeout, budget)


@dataclass(frozen=True)
class _Candidate:
    """What the stage needs of a candidate row, read before any LLM call."""

    id: int
    pattern_id: int
    formal: str
    target_api: str
    adapted_trigger: dict[str, Any] | None
    status: str


def unsupported_mode(pattern: BugPattern) -> str | None:
    from fuzz_core.modes import UnknownMode, get_mode

    for mode in (pattern.reference_mode, pattern.test_mode):
        try:
            get_mode(mode.name, dict(mode.options))
        except UnknownMode:
            return mode.name
        except Exception:  # options the mode rejects: the harness reports it as an error verdict
            continue
    return None


def _pending(store: Store) -> list[_Candidate]:
    with store.session() as session:
        return [_Candidate(c.id, c.pattern_id, c.pattern.formal, c.target_api, c.adapted_trigger, c.status)
                for c in q.candidates_without_harness(session)]


def _skip(store: Store, candidate: _Candidate, note: str, summary: HarnessSummary) -> None:
    with store.session() as session:
        q.set_candidate_status(session, candidate.id, "no_harness", note)
    summary.skipped += 1


def _described(spec: dict[str, Any], answer: DescribedInputs) -> tuple[dict[str, Any], str | None]:
    """The spec with the model's description (or unchanged), and the note to record on the candidate."""
    from fuzz_core.spec import HarnessSpec, SpecError

    if answer.inputs is None:
        if answer.rejected is not None:
            return spec, f"{REJECTED_NOTE} ({answer.rejected}); signature inputs used"
        return spec, f"{UNAVAILABLE_NOTE} ({answer.unavailable}); signature inputs used"
    described = {**spec, "input_source": "described", "inputs": answer.inputs}
    try:
        HarnessSpec.from_dict(described)
    except SpecError as exc:
        return spec, f"{REJECTED_NOTE} ({exc}); signature inputs used"
    return described, None


def generate_harnesses(store: Store, opinfo_names: frozenset[str], *,
                       input_writer: InputWriter | None = None) -> HarnessSummary:
    """Specs for new candidates; targets outside OpInfo get LLM-described inputs when a writer is
    given, and signature-driven inputs when its answer is rejected or missing (the reason is noted)."""
    summary = HarnessSummary()
    for candidate in _pending(store):
        try:
            pattern = parse_formal(candidate.formal)
        except FormalParseError as exc:
            _skip(store, candidate, f"pattern does not parse: {exc}", summary)
            continue
        unsupported = unsupported_mode(pattern)
        if unsupported:
            _skip(store, candidate, f"the fuzz core has no mode {unsupported!r}", summary)
            continue
        trigger = candidate.adapted_trigger or pattern.trigger.model_dump()
        in_opinfo = candidate.target_api in opinfo_names
        try:
            spec = build_spec(pattern, candidate.target_api, trigger, in_opinfo=in_opinfo, seed_key=candidate.pattern_id)
        except ApiRejected as exc:  # a row stored before names were checked
            _skip(store, candidate, f"target API {exc.reason}", summary)
            continue
        note = None
        if input_writer is not None and not in_opinfo:
            answer = input_writer(pattern, candidate.target_api, trigger)  # no session open meanwhile
            spec, note = _described(spec, answer)
            if spec["input_source"] == "described":
                summary.llm_inputs += 1
            elif answer.unavailable is not None:
                summary.llm_inputs_unavailable += 1
            else:
                summary.llm_inputs_rejected += 1
        with store.session() as session:
            q.add_harness(session, candidate.id, spec)
            status = "harnessed" if candidate.status == "proposed" else candidate.status
            if status != candidate.status or note:
                q.set_candidate_status(session, candidate.id, status, note)
        summary.harnesses += 1
    return summary
