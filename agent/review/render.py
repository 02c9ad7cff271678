"""Plain-text rendering of one finding for `transfuzz review show`.

Everything here may come from an issue or an LLM, so it is made safe for a terminal: one-line
fields lose their newlines (a title must not forge a line of its own) and every field loses
escape sequences and control characters (an OSC 52 sequence would write the reader's clipboard).
"""

from __future__ import annotations

import json
from typing import Any

from agent.review.views import FindingDetail
from agent.text_safety import one_line, strip_control
from fuzz_core.evidence import EVIDENCE_FIELDS, Evidence

# Evidence keys shown first, in this order; the rest follow alphabetically.
EVIDENCE_ORDER = (
    "max_abs_diff",
    "max_rel_diff",
    "mismatch_count",
    "first_index",
    "ref_error_vs_fp64",
    "test_error_vs_fp64",
    "backend_ablation",
    "dtype",
    "torch_version",
)
# Printed in sections of their own, not as raw evidence lines.
OWN_SECTIONS = ("checks", "original")
# Both name typed Evidence fields (fuzz_core/evidence.py is the one place that spells evidence keys).
assert set(EVIDENCE_ORDER + OWN_SECTIONS) <= EVIDENCE_FIELDS, set(EVIDENCE_ORDER + OWN_SECTIONS) - EVIDENCE_FIELDS


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, default=str)
    return one_line(value)


def evidence_lines(stored: dict[str, Any]) -> list[str]:
    """Every entry of the stored evidence, as stored (a dump: the figures first, then by name)."""
    entries = dict(stored)
    names = [k for k in EVIDENCE_ORDER if k in entries] + sorted(
        k for k in entries if k not in EVIDENCE_ORDER and k not in OWN_SECTIONS)
    return [f"  {one_line(name)}: {_value(entries[name])}" for name in names]


def _block(text: str) -> list[str]:
    """A multi-line field (formal notation, repro): its own lines, each without control sequences."""
    return strip_control(text, keep_newlines=True).splitlines()


def render_detail(detail: FindingDetail, *, group: list[str] | None = None) -> str:
    """The text `review show` prints; every line is free of terminal control sequences.
    `group`: lines about the finding's root-cause group (agent/review/grouping.py)."""
    lines = _detail_lines(detail)
    if group:
        lines += ["", "Root-cause group:"] + [f"  {one_line(line)}" for line in group]
    return "\n".join(lines)


def _detail_lines(detail: FindingDetail) -> list[str]:
    lines = [
        f"Finding {detail.id}: {one_line(detail.verdict)} ({one_line(detail.review_status)})",
        f"  target API:  {one_line(detail.target_api)}",
        f"  kind:        {one_line(detail.kind)}",
        f"  modes:       {one_line(detail.reference_mode)} vs {one_line(detail.test_mode)}",
        f"  dtype:       {one_line(detail.dtype or '-')}",
        f"  signature:   {one_line(detail.signature or '-')}",
        f"  harness:     {detail.harness_id}" + (f" (run {detail.run_id})" if detail.run_id is not None else ""),
        "",
        "Source issue:",
    ]
    if detail.source is None:
        lines.append("  none (harness made directly, not transferred from an issue)")
    else:
        lines.append(f"  {one_line(detail.source.repo)}#{detail.source.number}: {one_line(detail.source.title)}")
        lines.append(f"  {detail.source.url or '(no link: the stored repo name is not a GitHub owner/name)'}")
    lines += ["", "Pattern:"]
    if detail.pattern is None:
        lines.append("  none")
    else:
        lines.append(
            f"  #{detail.pattern.id} {one_line(detail.pattern.kind or '?')} on {one_line(detail.pattern.api or '?')}"
            f" (confidence {detail.pattern.confidence:.2f})"
        )
        lines.append(f"  source re-check: {one_line(detail.pattern.source_recheck)}")
        if detail.pattern.source_recheck_detail:
            lines.append(f"    ({one_line(detail.pattern.source_recheck_detail)})")
        formal = detail.pattern.formal or "(no formal text stored)"
        lines += ["  " + line for line in _block(formal)]
    if detail.candidate is not None:
        lines += [
            "",
            f"Transfer: candidate #{detail.candidate.id}, score {detail.candidate.score:.3f}",
            f"  {one_line(detail.candidate.rationale) or '(no rationale)'}",
        ]
    if detail.trigger:
        lines += ["", f"Trigger: {json.dumps(detail.trigger, sort_keys=True)}"]
    lines += ["", f"Verdict: {detail.verdict}", f"  {one_line(detail.reason) or '(no reason recorded)'}"]
    from agent.review.checks import check_lines

    lines += ["", "Checks (as recorded when they ran):"]
    lines += check_lines(detail.verdict, detail.evidence)
    if detail.values is not None:
        from agent.review.values import value_lines

        lines += ["", "Values:"] + [strip_control(line) for line in value_lines(detail.values)]
    lines += ["", "Evidence:"]
    lines += evidence_lines(detail.evidence) or ["  (none)"]
    if Evidence.of(detail.evidence).adopted_minimised:
        lines.append("  (every figure above is from the minimised input; what the fuzzer first found is kept under "
                     "evidence 'original', shown by --json)")
    lines += ["", "Repro:"]
    lines += _block(detail.repro.rstrip("\n")) if detail.repro.strip() else ["  (no repro stored)"]
    lines += ["", "Reviews:"]
    if not detail.reviews:
        lines.append("  none yet")
    for review in detail.reviews:
        note = f": {one_line(review.note)}" if review.note else ""
        lines.append(f"  {review.created_at:%Y-%m-%d %H:%M:%S %Z} {one_line(review.reviewer)} {review.decision}{note}")
    return lines
