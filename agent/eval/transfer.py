"""How well transfer finds the APIs that share a known bug's root cause, against a random pick.

Note [Transfer evaluation]
A root-cause group names a source API, its pattern's kind and mode pair, and the sibling APIs
our sweeps showed to fail for the same reason. For each group the source's pattern (the one the
offline analyzer extracts from a sample issue, else one synthesised from the group) is ranked
against the whole inventory exactly as the transfer stage ranks it, and each sibling's 1-based
rank is read off (None when a gate removed it). The baseline is a uniformly random order of the
same gated candidates: its expected rank is (n+1)/2, its expected reciprocal rank H(n)/n and its
chance of a hit within k is min(k, n)/n, so the lift compares the matcher with what the gates
alone achieve. "Share confirmed" counts siblings with a confirmed finding in the database for
the group's test mode (None when no sibling was fuzzed there).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent.inventory.enumerate import ApiEntry
from agent.patterns import KNOWN_MODES, BugPattern, Mode, Oracle, PatternKind, Trigger
from agent.patterns.schema import _public_torch_api as _checked_api  # one rule for API names everywhere
from agent.transfer.profile import ApiProfile
from agent.transfer.rank import TransferIndex, gate

SourceProfileFn = Callable[[str], ApiProfile | None]


class GroupsFileError(ValueError):
    """The groups file cannot be used; the message names the file and the problem."""


class RootCauseGroup(BaseModel):
    """A source pattern and the APIs known to share its root cause (examples/eval/transfer_groups.json)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=100)
    source: str
    kind: PatternKind
    reference_mode: str = "eager"
    test_mode: str
    siblings: list[str] = Field(min_length=1)
    evidence: str = ""

    @field_validator("source")
    @classmethod
    def _source_is_public(cls, value: str) -> str:
        return _checked_api(value)

    @field_validator("siblings")
    @classmethod
    def _siblings_are_public(cls, value: list[str]) -> list[str]:
        return [_checked_api(v) for v in value]

    @field_validator("reference_mode", "test_mode")
    @classmethod
    def _known_mode(cls, value: str) -> str:
        if value not in KNOWN_MODES:
            raise ValueError(f"unknown mode {value!r}")
        return value


class GroupsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    about: str = ""
    groups: list[RootCauseGroup] = Field(min_length=1)


def load_groups(path: Path) -> list[RootCauseGroup]:
    """The groups of a file; GroupsFileError naming the file and field when it is unusable."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GroupsFileError(f"{path}: cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GroupsFileError(f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    try:
        groups = GroupsFile.model_validate(data).groups
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise GroupsFileError(f"{path}: {where}: {first['msg']}") from None
    ids = [g.id for g in groups]
    if len(set(ids)) != len(ids):
        raise GroupsFileError(f"{path}: group ids repeat")
    return groups


@dataclass(frozen=True)
class SourcePattern:
    pattern: BugPattern
    origin: str  # "sample issue #108" or "synthesised"


def sample_patterns(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], SourcePattern]:
    """Offline-analyzer patterns of issue records, keyed by (api, kind, test mode); first issue wins."""
    from agent.extract.analyzer import analyze_raw

    found: dict[tuple[str, str, str], SourcePattern] = {}
    for record in records:
        pattern = analyze_raw(dict(record)).pattern
        if pattern is None:
            continue
        key = (pattern.api, pattern.kind.value, pattern.test_mode.name)
        found.setdefault(key, SourcePattern(pattern, f"sample issue #{record.get('number', '?')}"))
    return found


def group_pattern(group: RootCauseGroup, samples: Mapping[tuple[str, str, str], SourcePattern]) -> SourcePattern:
    """The sample's pattern for the group's source, kind and test mode, else one built from the group."""
    sample = samples.get((group.source, group.kind.value, group.test_mode))
    if sample is not None:
        return sample
    pattern = BugPattern(kind=group.kind, api=group.source, reference_mode=Mode(name=group.reference_mode),
                         test_mode=Mode(name=group.test_mode), trigger=Trigger(), oracle=Oracle())
    return SourcePattern(pattern, "synthesised")


@dataclass
class SiblingRank:
    api: str
    rank: int | None  # 1-based among the gated candidates; None when not proposed at all
    gated_out: str | None = None  # the gate's reason, or "not in the inventory"
    random_rank: float | None = None  # expected rank of a uniformly random pick among the same candidates
    lift: float | None = None  # random_rank / rank
    rationale: str = ""
    fuzzed: bool = False  # any finding for this API in the group's test mode
    confirmed: bool = False


@dataclass
class GroupResult:
    id: str
    source: str
    kind: str
    test_mode: str
    pattern_from: str
    trigger_params: dict[str, str]
    candidates: int  # targets that pass the structural gates
    siblings: list[SiblingRank]
    share_confirmed: float | None = None


@dataclass
class TransferEval:
    matcher: str
    top_k: int
    inventory_apis: int
    inventory_source: str
    groups: list[GroupResult]
    pairs: int = 0
    ranked_pairs: int = 0
    hits_at_k: float = 0.0
    random_hits_at_k: float = 0.0
    mrr: float = 0.0
    random_mrr: float = 0.0
    mrr_lift: float | None = None
    mean_rank_lift: float | None = None  # geometric mean of random_rank/rank over the ranked pairs
    share_confirmed: float | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# (api, test mode) -> (fuzzed, confirmed)
FindingsLookup = Callable[[str, str], tuple[bool, bool]]


def evaluate_transfer(groups: list[RootCauseGroup], index: TransferIndex, *,
                      samples: Mapping[tuple[str, str, str], SourcePattern],
                      source_profile: SourceProfileFn, top_k: int = 5,
                      findings: FindingsLookup | None = None, inventory_source: str = "") -> TransferEval:
    """Rank every group's siblings for its source pattern; hit@k, MRR and the lift over random."""
    profiles = {t.api: t for t in index.targets}
    results: list[GroupResult] = []
    reciprocal: list[float] = []
    random_reciprocal: list[float] = []
    hits: list[float] = []
    random_hits: list[float] = []
    log_lifts: list[float] = []
    for group in groups:
        source = group_pattern(group, samples)
        profile = profiles.get(group.source) or source_profile(group.source)
        ranked = index.rank(source.pattern, profile, top_k=None)
        n = len(ranked)
        position = {c.target_api: (i, c) for i, c in enumerate(ranked, start=1)}
        siblings: list[SiblingRank] = []
        for api in group.siblings:
            fuzzed, confirmed = findings(api, group.test_mode) if findings is not None else (False, False)
            found = position.get(api)
            if found is None:
                target = profiles.get(api)
                why = "not in the inventory" if target is None else (gate(source.pattern, target, source=profile)
                                                                      or "not ranked")
                siblings.append(SiblingRank(api, None, gated_out=why, fuzzed=fuzzed, confirmed=confirmed))
                reciprocal.append(0.0)
                random_reciprocal.append(0.0)
                hits.append(0.0)
                random_hits.append(0.0)
                continue
            rank, candidate = found
            random_rank = (n + 1) / 2
            siblings.append(SiblingRank(api, rank, random_rank=random_rank, lift=round(random_rank / rank, 3),
                                        rationale=candidate.rationale, fuzzed=fuzzed, confirmed=confirmed))
            reciprocal.append(1.0 / rank)
            random_reciprocal.append(sum(1.0 / i for i in range(1, n + 1)) / n)
            hits.append(1.0 if rank <= top_k else 0.0)
            random_hits.append(min(top_k, n) / n)
            log_lifts.append(math.log(random_rank / rank))
        fuzzed_siblings = [s for s in siblings if s.fuzzed]
        results.append(GroupResult(
            id=group.id, source=group.source, kind=group.kind.value, test_mode=group.test_mode,
            pattern_from=source.origin, trigger_params=dict(source.pattern.trigger.params), candidates=n,
            siblings=siblings,
            share_confirmed=(round(sum(s.confirmed for s in fuzzed_siblings) / len(fuzzed_siblings), 4)
                             if fuzzed_siblings else None),
        ))
    pairs = len(reciprocal)
    all_fuzzed = [s for g in results for s in g.siblings if s.fuzzed]
    mrr = sum(reciprocal) / pairs if pairs else 0.0
    random_mrr = sum(random_reciprocal) / pairs if pairs else 0.0
    return TransferEval(
        matcher=index.matcher, top_k=top_k, inventory_apis=len(index.targets), inventory_source=inventory_source,
        groups=results, pairs=pairs, ranked_pairs=len(log_lifts),
        hits_at_k=round(sum(hits) / pairs, 4) if pairs else 0.0,
        random_hits_at_k=round(sum(random_hits) / pairs, 4) if pairs else 0.0,
        mrr=round(mrr, 4), random_mrr=round(random_mrr, 4),
        mrr_lift=round(mrr / random_mrr, 3) if random_mrr else None,
        mean_rank_lift=round(math.exp(sum(log_lifts) / len(log_lifts)), 3) if log_lifts else None,
        share_confirmed=(round(sum(s.confirmed for s in all_fuzzed) / len(all_fuzzed), 4) if all_fuzzed else None),
    )


# ---- I/O: the inventory, the sample issues and the stored findings ----

def read_issue_records(path: Path) -> list[dict[str, Any]]:
    """Issue objects of a dump file (JSON array or JSON Lines); GroupsFileError when unreadable."""
    from agent.ingest.stream import DumpFormatError, iter_dump

    try:
        return [r.value for r in iter_dump(path) if r.error is None and isinstance(r.value, dict)]
    except (OSError, DumpFormatError) as exc:
        raise GroupsFileError(f"{path}: cannot read issues: {exc}") from None


def computed_profiles(entries: Iterable[ApiEntry] | None = None) -> list[ApiProfile]:
    """The inventory (or ``entries`` of it) computed in memory from the installed torch, as
    refresh_inventory would store it; nothing is written. Seconds for the whole API."""
    from agent.extract import semantics_for
    from agent.inventory.enumerate import enumerate_api
    from agent.inventory.refresh import semantics_row
    from agent.transfer.profile import profile_from_semantics

    profiles = []
    for entry in entries if entries is not None else enumerate_api():
        try:
            row = semantics_row(semantics_for(entry.api), entry, "", "offline")
        except Exception:  # an API introspection cannot describe is left out, as refresh_inventory does
            continue
        profiles.append(profile_from_semantics(row["api"], row["category"], row["summary"], row["parameters"],
                                               row["dtypes"], row["details"]))
    return profiles


def stored_findings(store: Any) -> FindingsLookup:
    """(api, test mode) -> (fuzzed, confirmed) from the findings the database holds."""
    from sqlalchemy import select

    from db import models

    seen: dict[tuple[str, str], bool] = {}
    with store.session() as session:
        for spec, verdict in session.execute(select(models.Harness.spec, models.Finding.verdict)
                                             .join(models.Finding, models.Finding.harness_id == models.Harness.id)):
            key = (str(spec.get("api", "")), str(spec.get("test_mode", "")))
            seen[key] = seen.get(key, False) or verdict == "confirmed"

    def lookup(api: str, test_mode: str) -> tuple[bool, bool]:
        return (api, test_mode) in seen, seen.get((api, test_mode), False)

    return lookup


def inventory_profiles(store: Any | None) -> tuple[list[ApiProfile], str]:
    """The stored inventory when the database holds one, else the one computed from torch; and which."""
    if store is not None:
        from agent.transfer.stage import load_index

        _, by_api = load_index(store)
        if by_api:
            return list(by_api.values()), "database"
    import torch

    return computed_profiles(), f"computed from torch {torch.__version__}"
