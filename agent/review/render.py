"""Plain-text rendering of one finding for `transfuzz review show`."""

from __future__ import annotations

import json
from typing import Any

from agent.review.views import FindingDetail

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


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def evidence_lines(evidence: dict[str, Any]) -> list[str]:
    keys = [k for k in EVIDENCE_ORDER if k in evidence] + sorted(k for k in evidence if k not in EVIDENCE_ORDER)
    return [f"  {key}: {_value(evidence[key])}" for key in keys]


def render_detail(detail: FindingDetail) -> str:
    lines = [
        f"Finding {detail.id}: {detail.verdict} ({detail.review_status})",
        f"  target API:  {detail.target_api}",
        f"  kind:        {detail.kind}",
        f"  modes:       {detail.reference_mode} vs {detail.test_mode}",
        f"  dtype:       {detail.dtype or '-'}",
        f"  signature:   {detail.signature or '-'}",
        f"  harness:     {detail.harness_id}" + (f" (run {detail.run_id})" if detail.run_id is not None else ""),
        "",
        "Source issue:",
    ]
    if detail.source is None:
        lines.append("  none (harness made directly, not transferred from an issue)")
    else:
        lines.append(f"  {detail.source.repo}#{detail.source.number}: {detail.source.title}")
        lines.append(f"  {detail.source.url}")
    lines += ["", "Pattern:"]
    if detail.pattern is None:
        lines.append("  none")
    else:
        reproduces = {True: "yes", False: "no", None: "not checked"}[detail.pattern.source_reproduces]
        lines.append(
            f"  #{detail.pattern.id} {detail.pattern.kind or '?'} on {detail.pattern.api or '?'}"
            f" (confidence {detail.pattern.confidence:.2f}; source bug reproduces on this torch: {reproduces})"
        )
        formal = detail.pattern.formal or "(no formal text stored)"
        lines += ["  " + line for line in formal.splitlines()]
    if detail.candidate is not None:
        lines += [
            "",
            f"Transfer: candidate #{detail.candidate.id}, score {detail.candidate.score:.3f}",
            f"  {detail.candidate.rationale or '(no rationale)'}",
        ]
    if detail.trigger:
        lines += ["", f"Trigger: {json.dumps(detail.trigger, sort_keys=True)}"]
    lines += ["", f"Verdict: {detail.verdict}", f"  {detail.reason or '(no reason recorded)'}", "", "Evidence:"]
    lines += evidence_lines(detail.evidence) or ["  (none)"]
    lines += ["", "Repro:"]
    lines += [detail.repro.rstrip("\n")] if detail.repro.strip() else ["  (no repro stored)"]
    lines += ["", "Reviews:"]
    if not detail.reviews:
        lines.append("  none yet")
    for review in detail.reviews:
        note = f": {review.note}" if review.note else ""
        lines.append(f"  {review.created_at:%Y-%m-%d %H:%M:%S %Z} {review.reviewer} {review.decision}{note}")
    return "\n".join(lines)
