"""Already reported? Match a root-cause group against stored issues and against OpInfo's expected failures and skips.

Issues (open and closed) match on the API name as a word in the title or body, scored up by the
mode pair's words (compile/inductor, float16/autocast, jit, ...) and the symptom's words (NaN,
empty, wrong result, ...); a match needs the API and at least one mode or symptom word, so an issue
that merely mentions `torch.add` in a traceback is not offered. Links come only from lineage's
builder (checked owner/name and number).

OpInfo's `decorators`/`skips` (DecorateInfo with unittest.expectedFailure or unittest.skip) are
matched by the test class/test names that exercise the finding's mode pair and by dtype; an
expected failure that covers the finding means PyTorch already knows, and the group is not
exported as new.

A finding on the source pattern's own API with its own mode pair is the reported bug itself: its source
issue is named first, as already reported (with the source re-check's outcome, agent/transfer/
source_recheck.py), not skipped as lineage as it is for findings on transferred target APIs.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from agent.review import lineage
from agent.review.grouping import RootCauseGroup, failure_kind
from db.queries.findings import FindingRecord
from db.queries.known import IssueMention, issues_mentioning

# Words an issue about this mode pair uses.
_MODE_WORDS: dict[str, tuple[str, ...]] = {
    "compile": ("torch.compile", "inductor", "dynamo", "compiled", "aot_eager", "pt2"),
    "jit": ("jit", "torchscript", "trace", "script"),
    "dtype": ("float16", "fp16", "half", "bfloat16", "bf16", "precision"),
    "autocast": ("autocast", "amp", "float16", "bfloat16", "mixed precision"),
    "variant": ("out=", "inplace", "in-place", "method"),
    "layout": ("contiguous", "channels_last", "stride", "non-contiguous"),
    "device": ("cuda", "gpu", "cpu vs cuda"),
}
_SYMPTOM_WORDS: dict[str, tuple[str, ...]] = {
    "value": ("wrong result", "incorrect", "mismatch", "differ", "different result", "inconsistent", "accuracy"),
    "nan_inf": ("nan", "inf", "overflow"),
    "exception": ("error", "exception", "raises", "fails"),
    "shape": ("shape", "size"),
    "dtype": ("dtype",),
    "empty": ("empty", "zero-size", "numel() == 0", "zero size"),
}
# OpInfo test classes / test names that exercise a mode family.
_OPINFO_TESTS: dict[str, tuple[str, ...]] = {
    "compile": ("inductor", "compile", "dynamo"),
    "jit": ("jit",),
    "dtype": ("reference_numerics", "extremal", "large_values", "small_values", "dtypes"),
    "autocast": ("autocast", "dtypes"),
    "variant": ("variant_consistency_eager", "test_out", "inplace"),
    "layout": ("contig", "non_contig", "every_other", "channels_last"),
    "device": ("compare_cpu",),
}


@dataclass
class IssueMatch:
    repo: str
    number: int
    title: str
    state: str
    url: str | None
    score: int
    matched: list[str]
    relation: str = "possible duplicate"  # or SOURCE_RELATION: the report the finding's pattern came from
    note: str = ""  # for the source issue: its re-check on this torch


SOURCE_RELATION = "source issue"


@dataclass
class OpInfoEntry:
    op: str
    test: str  # "TestClass.test_name"
    kind: str  # "expected failure" or "skip"
    dtypes: list[str]
    reason: str


@dataclass
class KnownReport:
    issues: list[IssueMatch] = field(default_factory=list)
    opinfo: list[OpInfoEntry] = field(default_factory=list)

    @property
    def known_expected_failure(self) -> bool:
        return any(e.kind == "expected failure" for e in self.opinfo)


def _family(mode: str) -> str:
    return mode.split(":", 1)[0].split(".", 1)[0]


def _word_in(word: str, text: str) -> bool:
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(word.lower()) + r"(?![A-Za-z0-9_])", text) is not None


def score_issue(issue: IssueMention, apis: Sequence[str], modes: Sequence[str], symptoms: Sequence[str]) -> IssueMatch | None:
    """An IssueMatch when the issue names one of the APIs and at least one mode or symptom word."""
    text = f"{issue.title}\n{issue.body}".lower()
    title = issue.title.lower()
    matched: list[str] = []
    score = 0
    for api in apis:
        leaf = api.rsplit(".", 1)[-1]
        if _word_in(api, text) or _word_in(leaf, text):
            matched.append(api)
            score += 3 if (_word_in(leaf, title) or _word_in(api, title)) else 2
    if not matched:
        return None
    context = 0
    for family in dict.fromkeys(_family(m) for m in modes if m != "eager"):
        hits = [w for w in _MODE_WORDS.get(family, ()) if _word_in(w, text)]
        if hits:
            matched.append(f"mode: {hits[0]}")
            context += 1
    for symptom in symptoms:
        hits = [w for w in _SYMPTOM_WORDS.get(symptom, ()) if _word_in(w, text)]
        if hits:
            matched.append(f"symptom: {hits[0]}")
            context += 1
    if context == 0:
        return None
    return IssueMatch(repo=issue.repo, number=issue.number, title=issue.title, state=issue.state,
                      url=lineage.github_issue_url(issue.repo, issue.number), score=score + context, matched=matched)


def _symptoms(group: RootCauseGroup) -> list[str]:
    kinds = {failure_kind(f).split(":", 1)[0] for f in group.findings}
    if "empty input" in group.cause.symptom:
        kinds.add("empty")
    return sorted(kinds)


def _same_modes_as_source(finding: FindingRecord) -> bool:
    """The finding ran the source pattern's own mode pair (its reference as the harness stage adapts it)."""
    from agent.harness.generate import reference_mode_for

    pattern = finding.pattern
    if pattern is None or not pattern.reference_mode or not pattern.test_mode:
        return False
    reference, test = lineage.mode_pair(finding)
    return test == pattern.test_mode and reference in (
        pattern.reference_mode, reference_mode_for(pattern.reference_mode, pattern.test_mode))


def source_issue_matches(group: RootCauseGroup) -> list[IssueMatch]:
    """The issue a finding's pattern came from, when the finding is on that pattern's own API with its modes:
    the bug is already reported there (whatever the source re-check said about this torch)."""
    from agent.transfer.source_recheck import recheck_text

    found: dict[tuple[str, int], IssueMatch] = {}
    for finding in group.findings:
        issue, pattern = finding.issue, finding.pattern
        if issue is None or pattern is None or not pattern.api or (issue.repo, issue.number) in found:
            continue
        if lineage.target_api(finding) != pattern.api or not _same_modes_as_source(finding):
            continue
        reference, test = lineage.mode_pair(finding)
        found[(issue.repo, issue.number)] = IssueMatch(
            repo=issue.repo, number=issue.number, title=issue.title, state=issue.state or "?",
            url=lineage.github_issue_url(issue.repo, issue.number), score=100,
            matched=[f"same API ({pattern.api}) and modes ({reference} vs {test}) as the report"],
            relation=SOURCE_RELATION,
            note="source re-check: " + recheck_text(pattern.source_recheck, pattern.source_reproduces))
    return list(found.values())


def matching_issues(session: Any, group: RootCauseGroup, *, limit: int = 5) -> list[IssueMatch]:
    """The source issue when a finding is on its API with its modes, then other stored issues that match."""
    sources = source_issue_matches(group)
    return sources + _other_issues(session, group, limit=limit)


def _other_issues(session: Any, group: RootCauseGroup, *, limit: int) -> list[IssueMatch]:
    apis = group.apis
    leaves = [api.rsplit(".", 1)[-1] for api in apis]
    modes = sorted({m for f in group.findings for m in lineage.mode_pair(f)})
    own = {(f.issue.repo, f.issue.number) for f in group.findings if f.issue is not None}
    matches = []
    for issue in issues_mentioning(session, leaves):
        if (issue.repo, issue.number) in own:
            continue  # the issue the pattern came from is the source, not a duplicate
        match = score_issue(issue, apis, modes, _symptoms(group))
        if match is not None:
            matches.append(match)
    matches.sort(key=lambda m: (-m.score, -m.number))
    return matches[:limit]


def _decorator_kind(decorator: Any) -> tuple[str, str] | None:
    """("expected failure" | "skip", reason) for unittest's decorators; None for others (tolerance overrides)."""
    name = getattr(decorator, "__qualname__", "") or getattr(decorator, "__name__", "")
    if name == "expectedFailure":
        return "expected failure", ""
    if name.startswith("skip"):
        try:
            reason = inspect.getclosurevars(decorator).nonlocals.get("reason", "")
        except (TypeError, ValueError):
            reason = ""
        return "skip", str(reason)
    return None


def opinfo_entries(api: str, test_mode: str, dtype: str | None) -> list[OpInfoEntry]:
    """OpInfo expected failures and skips of `api` whose test exercises `test_mode`'s family, for `dtype` (or all)."""
    from fuzz_core.inputs.opinfo import find_opinfo

    op = find_opinfo(api)
    if op is None:
        return []
    names = _OPINFO_TESTS.get(_family(test_mode), ())
    family_dtype = test_mode.split(":", 1)[1] if _family(test_mode) in ("dtype", "autocast") else dtype
    found: list[OpInfoEntry] = []
    for info in list(getattr(op, "decorators", ()) or ()) + list(getattr(op, "skips", ()) or ()):
        decorators = getattr(info, "decorators", None)
        if decorators is None:
            continue
        test = f"{getattr(info, 'cls_name', None) or '*'}.{getattr(info, 'test_name', None) or '*'}"
        if not any(n in test.lower() for n in names):
            continue
        dtypes = [str(d).removeprefix("torch.") for d in (getattr(info, "dtypes", None) or ())]
        if dtypes and family_dtype and family_dtype not in dtypes:
            continue
        if getattr(info, "device_type", None) not in (None, "cpu"):
            continue
        for decorator in decorators:
            kind = _decorator_kind(decorator)
            if kind is not None:
                found.append(OpInfoEntry(op=op.name, test=test, kind=kind[0], dtypes=dtypes, reason=kind[1]))
    return found


def known_for_group(session: Any, group: RootCauseGroup) -> KnownReport:
    report = KnownReport(issues=matching_issues(session, group))
    for finding in group.findings:
        reference, test = lineage.mode_pair(finding)
        for entry in opinfo_entries(lineage.target_api(finding), test, lineage.dtype(finding)):
            if entry not in report.opinfo:
                report.opinfo.append(entry)
    return report
