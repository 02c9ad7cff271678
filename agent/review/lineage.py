"""What a reviewer needs to read off a finding: target API, mode pair, kind, dtype, source issue.

Each value is taken from the most specific place that has it: the harness spec that actually
ran, then the evidence fuzz_core recorded, then the candidate, then the pattern. Every field is
optional: a harness made by ``fuzz api`` has no candidate, pattern or issue (Note [Finding
lineage] in db/queries/findings.py), and older evidence may lack keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from db.queries.findings import FindingRecord
from fuzz_core.evidence import Evidence

# GitHub's own rules: an owner is 1-39 letters, digits or inner hyphens; a repository name is
# letters, digits, ".", "-", "_" (but not "." or ".."). Anything else is no repository of GitHub's.
_GITHUB_OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?")
_GITHUB_REPO = re.compile(r"[A-Za-z0-9._-]{1,100}")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def target_api(finding: FindingRecord) -> str:
    spec_api = _text(finding.harness_spec.get("api"))
    if spec_api:
        return spec_api
    if finding.candidate is not None:
        return finding.candidate.target_api
    signature_api = finding.signature.split("|", 1)[0] if finding.signature else ""
    return signature_api or "(unknown API)"


def mode_pair(finding: FindingRecord) -> tuple[str, str]:
    """(reference mode, test mode); "?" where nothing recorded it."""
    spec = finding.harness_spec
    reference, test = _text(spec.get("reference_mode")), _text(spec.get("test_mode"))
    modes = Evidence.of(finding.evidence).modes  # a list today; a dict in older rows
    if isinstance(modes, dict):
        reference = reference or _text(modes.get("reference")) or _text(modes.get("reference_mode"))
        test = test or _text(modes.get("test")) or _text(modes.get("test_mode"))
    elif isinstance(modes, (list, tuple)) and len(modes) == 2:
        reference = reference or _text(modes[0])
        test = test or _text(modes[1])
    if finding.pattern is not None:
        reference = reference or _text(finding.pattern.reference_mode)
        test = test or _text(finding.pattern.test_mode)
    return reference or "?", test or "?"


def kind(finding: FindingRecord) -> str:
    spec_kind = _text(finding.harness_spec.get("kind"))
    if spec_kind:
        return spec_kind
    if finding.pattern is not None and finding.pattern.kind:
        return finding.pattern.kind
    parts = finding.signature.split("|") if finding.signature else []
    return parts[2] if len(parts) > 2 and parts[2] else "?"


def dtype(finding: FindingRecord) -> str | None:
    return _text(Evidence.of(finding.evidence).dtype) or _text(finding.harness_spec.get("dtype"))


def trigger(finding: FindingRecord) -> dict[str, Any]:
    """The input conditions that ran: the spec's trigger, else the adapted or the pattern's."""
    spec_trigger = finding.harness_spec.get("trigger")
    if isinstance(spec_trigger, dict) and spec_trigger:
        return spec_trigger
    if finding.candidate is not None and finding.candidate.adapted_trigger:
        return finding.candidate.adapted_trigger
    if finding.pattern is not None:
        return finding.pattern.trigger
    return {}


def source_api(finding: FindingRecord) -> str | None:
    return finding.pattern.api if finding.pattern is not None else None


def source_issue_ref(finding: FindingRecord) -> str | None:
    """``owner/repo#N`` of the issue the pattern came from."""
    if finding.issue is None:
        return None
    return f"{finding.issue.repo}#{finding.issue.number}"


def is_github_repo(repo: str) -> bool:
    owner, _, name = repo.partition("/")
    return bool(_GITHUB_OWNER.fullmatch(owner) and _GITHUB_REPO.fullmatch(name) and name not in (".", ".."))


def github_issue_url(repo: str, number: int) -> str | None:
    """The issue's page, built from a checked ``owner/name`` and a positive number; None otherwise."""
    if not isinstance(number, int) or isinstance(number, bool) or number < 1 or not is_github_repo(repo):
        return None
    return f"https://github.com/{repo}/issues/{number}"


def source_issue_url(finding: FindingRecord) -> str | None:
    """Never the dump's own link: an ``html_url`` is issue-author data (it has been ``javascript:``)."""
    if finding.issue is None:
        return None
    return github_issue_url(finding.issue.repo, finding.issue.number)


def describe_trigger(conditions: dict[str, Any], dtype: str | None = None) -> str:
    """A short phrase such as "float16 inputs with nan, noncontiguous layout"; "" when nothing is known."""
    dtypes = conditions.get("dtypes")
    names = [str(d) for d in dtypes] if isinstance(dtypes, list) and dtypes else ([dtype] if dtype else [])
    extras: list[str] = []
    special = conditions.get("special_values")
    if isinstance(special, list) and special:
        extras.append("with " + ", ".join(map(str, special)))
    layout = conditions.get("layout")
    if layout:
        extras.append(f"{layout} layout")
    shape = conditions.get("shape")
    if isinstance(shape, list) and shape:
        extras.append(", ".join(map(str, shape)) + " shapes")
    params = conditions.get("params")
    if isinstance(params, dict) and params:
        extras.append(", ".join(f"{k} {v}" for k, v in params.items()))
    if not names and not extras:
        return ""
    subject = ("/".join(names) + " inputs") if names else "inputs"
    return " ".join([subject, *extras[:1]]) + "".join(f", {e}" for e in extras[1:])


@dataclass(frozen=True)
class RationaleParts:
    """A candidate's rationale read back: how it was matched, and what the transfer check said."""

    matcher: str | None  # "tfidf", an embeddings matcher's name, "source" (the re-check of the source API), or None
    ranking: str  # the ranker's own words (similarity, category, shared roles, ...)
    check: str | None  # the transfer check's reason (LLM or offline gate), None when no check ran


_CHECK_SEPARATOR = "; check: "  # agent/transfer/stage.py appends the check's reason this way
_SOURCE_RECHECK = "the source API:"  # the rationale agent/transfer/stage.py gives the source's own row
_FUNCTIONAL = re.compile(r"^functional similarity [0-9.]+ \(([^)]{1,80})\)")


def rationale_parts(rationale: str) -> RationaleParts:
    """Split a stored rationale (agent/transfer/rank.py's `_rationale` + stage.py's check suffix)."""
    ranking, sep, check = rationale.partition(_CHECK_SEPARATOR)
    if ranking.startswith(_SOURCE_RECHECK):
        matcher: str | None = "source"
    elif ranking.startswith("semantic text similarity"):
        matcher = "tfidf"
    else:
        found = _FUNCTIONAL.match(ranking)
        matcher = found.group(1) if found else None
    return RationaleParts(matcher=matcher, ranking=ranking, check=check if sep else None)
