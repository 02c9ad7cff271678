"""The transfer stage: for each new pattern, store its top-K target APIs and its source re-check.

Each pattern is one short transaction, written after its LLM checks are done (never with a
transaction open across a model call), so the LLM cache can write meanwhile even on SQLite
and a stop or crash keeps every pattern already transferred. A spent LLM budget or an endpoint
that is down stops the stage; patterns not reached keep no candidates and stay due.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agent.extract.public_ops import api_for_mode
from agent.patterns import BugPattern, FormalParseError, parse_formal
from agent.transfer.profile import ApiProfile, profile_from_semantics
from agent.transfer.rank import RankedCandidate, TextSimilarity, TransferIndex
from db.queries import transfer as q
from db.store import Store
from fuzz_core.api_names import is_public_api

# (pattern, candidate) -> (keep, reason, adapted trigger or None); the LLM transfer check plugs in here
CandidateCheck = Callable[[BugPattern, RankedCandidate], tuple[bool, str, dict | None]]
# inventory profiles -> the similarity ranking uses (embeddings plug in here; TF-IDF when None)
SimilarityFactory = Callable[[list[ApiProfile]], TextSimilarity]


@dataclass
class TransferSummary:
    patterns: int = 0
    candidates: int = 0
    vetoed: int = 0
    unparsable: int = 0
    unsupported: int = 0
    matcher: str = "tfidf"
    per_pattern: dict[int, list[str]] = field(default_factory=dict)
    stopped: str | None = None  # why the stage stopped early (LLM budget spent, endpoint down)


def load_index(store: Store, similarity: SimilarityFactory | None = None) -> tuple[TransferIndex, dict[str, ApiProfile]]:
    with store.session() as session:
        profiles = [
            profile_from_semantics(s.api, s.category, s.summary, s.parameters, s.dtypes, s.details)
            for s in q.all_semantics(session)
            if is_public_api(s.api)  # rows an older version stored for a now-rejected name stay out
        ]
    return TransferIndex(profiles, similarity(profiles) if similarity else None), {p.api: p for p in profiles}


def run_transfer(store: Store, *, top_k: int = 5, limit: int | None = None,
                 check: CandidateCheck | None = None,
                 source_profile: Callable[[str], ApiProfile | None] | None = None,
                 unsupported_mode: Callable[[BugPattern], str | None] | None = None,
                 similarity: SimilarityFactory | None = None) -> TransferSummary:
    """Rank targets for every pattern without candidates; the source API is kept as a re-check."""
    index, profiles = load_index(store, similarity)
    from agent.llm.errors import STAGE_STOPPING_ERRORS

    summary = TransferSummary(matcher=index.matcher)
    with store.session() as session:
        patterns = q.patterns_without_candidates(session, limit=limit)
    for row in patterns:
        try:
            pattern = parse_formal(row.formal)
        except FormalParseError as exc:
            with store.session() as session:
                q.mark_pattern(session, row.id, status="error", error=f"formal text does not parse: {exc}")
            summary.unparsable += 1
            continue
        missing = unsupported_mode(pattern) if unsupported_mode else None
        if missing is not None:
            with store.session() as session:
                q.mark_pattern(session, row.id, status="unsupported", error=f"the fuzz core has no mode {missing!r}")
            summary.unsupported += 1
            continue
        source = profiles.get(pattern.api) or (source_profile(pattern.api) if source_profile else None)
        ranked = index.rank(pattern, source, top_k=top_k)
        # a variant:inplace harness calls the plain op and the mode its in-place spelling (api_for_mode): an in-place
        # spelling among the targets stands for its plain op, and an op reached twice is one candidate
        source_api = api_for_mode(pattern.api, pattern.test_mode.name)
        harnessed = {source_api}
        rows: list[dict] = [{
            "target_api": source_api, "score": 1.0, "status": "source",
            "rationale": "the source API: re-check whether the reported bug still reproduces",
            "adapted_trigger": pattern.trigger.model_dump(),
        }]
        vetoed = 0
        try:
            for cand in ranked:
                target = api_for_mode(cand.target_api, pattern.test_mode.name)
                if target in harnessed:
                    continue
                harnessed.add(target)
                status, rationale, trigger = "proposed", cand.rationale, cand.adapted_trigger
                if check is not None:
                    keep, reason, adapted = check(pattern, cand)
                    if not keep:
                        status, vetoed = "vetoed", vetoed + 1
                    rationale = f"{rationale}; check: {reason}" if reason else rationale
                    trigger = adapted if adapted is not None else trigger
                rows.append({"target_api": target, "score": cand.score, "status": status,
                             "rationale": rationale, "adapted_trigger": trigger})
        except STAGE_STOPPING_ERRORS as exc:  # this pattern and the rest stay due
            summary.stopped = str(exc)
            break
        with store.session() as session:
            q.add_candidates(session, row.id, rows)
            q.mark_pattern(session, row.id, status="transferred")
        summary.vetoed += vetoed
        summary.patterns += 1
        summary.candidates += len(rows) - 1
        summary.per_pattern[row.id] = [r["target_api"] for r in rows[1:]]
    return summary
