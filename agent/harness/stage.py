"""The harness stage: every proposed candidate (and each pattern's source API) gets a spec."""

from __future__ import annotations

from dataclasses import dataclass

from agent.harness.generate import build_spec
from agent.harness.llm_code import CodeWriter
from agent.patterns import BugPattern, FormalParseError, parse_formal
from db.queries import transfer as q
from db.store import Store


@dataclass
class HarnessSummary:
    harnesses: int = 0
    skipped: int = 0
    llm_code: int = 0


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


def generate_harnesses(store: Store, opinfo_names: frozenset[str], *,
                       code_writer: CodeWriter | None = None) -> HarnessSummary:
    """Specs for new candidates; targets outside OpInfo get LLM-written input code when a writer
    is given (and fall back to signature-driven inputs when it has no usable answer)."""
    summary = HarnessSummary()
    with store.session() as session:
        for candidate in q.candidates_without_harness(session):
            try:
                pattern = parse_formal(candidate.pattern.formal)
            except FormalParseError as exc:
                q.set_candidate_status(session, candidate.id, "no_harness", f"pattern does not parse: {exc}")
                summary.skipped += 1
                continue
            unsupported = unsupported_mode(pattern)
            if unsupported:
                q.set_candidate_status(session, candidate.id, "no_harness", f"the fuzz core has no mode {unsupported!r}")
                summary.skipped += 1
                continue
            trigger = candidate.adapted_trigger or pattern.trigger.model_dump()
            in_opinfo = candidate.target_api in opinfo_names
            spec = build_spec(pattern, candidate.target_api, trigger, in_opinfo=in_opinfo, seed_key=candidate.pattern_id)
            if code_writer is not None and not in_opinfo:
                code = code_writer(pattern, candidate.target_api, trigger)
                if code is not None:
                    spec.update(input_source="code", code=code)
                    summary.llm_code += 1
            q.add_harness(session, candidate.id, spec)
            if candidate.status == "proposed":
                q.set_candidate_status(session, candidate.id, "harnessed")
            summary.harnesses += 1
    return summary
