"""Render a report as the Markdown body of a PyTorch issue for a fuzzer-found bug.

Every piece of data is escaped where it is put in (agent/text_safety.py): one-line inline text with
Markdown/HTML inert and no @-mention, code spans and fenced blocks the content cannot close, and
links only to https://github.com/OWNER/REPO/issues/N built from a checked repo name. The
description, observed and expected lines arrive already escaped (Note [Report text is Markdown]
in report.py).
"""

from __future__ import annotations

import json

from agent.export.report import Report
from agent.review.known import SOURCE_RELATION
from agent.text_safety import code_span, markdown_inline, strip_control
from fuzz_core.evidence import Evidence

_RULE_BOXES = {"met": "[x]", "n/a": "[x]", "not_met": "[ ]", "unclear": "[ ]"}


def _fence(text: str, language: str = "") -> str:
    # A repro that itself contains ``` must not end our block early.
    text = strip_control(text, keep_newlines=True)
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _cell(value: object) -> str:
    if isinstance(value, float):
        value = f"{value:.6g}"
    return markdown_inline(value)


def _already_reported(report: Report) -> list[str]:
    """"Possible duplicate of …" lines; links only as lineage built them (checked owner/name and number)."""
    lines: list[str] = []
    for duplicate in report.possible_duplicates:
        ref = markdown_inline(str(duplicate.get("ref", "?")))
        url = duplicate.get("url")
        link = f"[{ref}]({url})" if isinstance(url, str) and url.startswith("https://github.com/") else ref
        matched = ", ".join(markdown_inline(str(m)) for m in duplicate.get("matched", [])[:4])
        state = markdown_inline(str(duplicate.get("state", "?")))
        title = markdown_inline(str(duplicate.get("title", "")))
        if duplicate.get("relation") == SOURCE_RELATION:  # the finding is the reported bug itself (known.py)
            note = f"; {markdown_inline(str(duplicate['note']))}" if duplicate.get("note") else ""
            lines.append(f"- Already reported as {link} ({state}), the issue this pattern was extracted from:"
                         f" “{title}” — {matched}{note}")
            continue
        lines.append(f"- Possible duplicate of {link} ({state}): “{title}” — matched {matched}")
    for entry in report.opinfo_known:
        reason = f": {markdown_inline(str(entry.get('reason')))}" if entry.get("reason") else ""
        lines.append(f"- OpInfo lists a {markdown_inline(str(entry.get('kind')))} for"
                     f" {code_span(str(entry.get('op')))} in {code_span(str(entry.get('test')))}{reason}")
    if not lines:
        return ["Already reported? No matching issue among the ingested ones (open or closed), and no OpInfo"
                " expected failure or skip for this op and mode.", ""]
    return ["#### Already reported?", "", *lines, ""]


def render_markdown(report: Report) -> str:
    out: list[str] = [f"# {markdown_inline(report.title)}", ""]
    out += ["### 🐛 Describe the bug", "", report.description, ""]

    if report.root_cause:
        out += [f"Root cause group: {markdown_inline(report.root_cause)}"
                + (f" — APIs: {', '.join(code_span(a) for a in report.apis)}" if len(report.apis) > 1 else ""), ""]
    out += _already_reported(report)
    out += ["#### Minimal repro", ""]
    if report.repro.strip() and report.short_repro_file:
        out += [
            f"Plain torch, inputs inline (also written as {code_span(report.short_repro_file)}). It prints both"
            " results and the float64 value, and exits 1 when the bug reproduces, 0 when it does not.",
            "",
            _fence(report.repro, "python"),
            "",
        ]
        if report.full_repro_file:
            attached = code_span(report.full_repro_file) + (
                f" with its inputs {code_span(report.repro_inputs_file)}" if report.repro_inputs_file else "")
            lead = next((f for f in report.findings if f.id == report.representative_finding), None)
            adopted = lead is not None and Evidence.of(lead.evidence).adopted_minimised
            which = "the same minimised input" if adopted else "the original, unminimised input"
            out += [f"Attached: the fuzzer's full oracle script {attached} ({which}"
                    + (f"; {report.repro_note}" if report.repro_note else "") + ").", ""]
    elif report.repro.strip():
        out += [
            f"Standalone, plain torch (also written as {code_span(f'repro_{report.representative_finding}.py')}"
            + (f"; {report.repro_note}" if report.repro_note else "")
            + "). It exits 1 and prints the mismatch when the bug reproduces, 0 when it does not.",
            "",
            _fence(report.repro, "python"),
            "",
        ]
    else:
        out += ["No repro script was stored for this finding.", ""]

    out += ["#### Observed", ""] + [f"- {line}" for line in report.observed] + [""]
    out += ["#### Expected", ""] + [f"- {line}" for line in report.expected] + [""]

    out += ["#### Backend ablation", ""]
    if report.backend_ablation:
        out += ["| backend | result |", "|---|---|"]
        out += [f"| {_cell(k)} | {_cell(v)} |" for k, v in report.backend_ablation.items()]
    else:
        out.append("Not recorded for this mode pair.")
    out.append("")

    out += ["#### Where this comes from", ""]
    if report.source_issue is not None:
        source = report.source_issue
        ref = markdown_inline(f"{source.repo}#{source.number}")
        link = f"[{ref}]({source.url})" if source.url.startswith("https://github.com/") else ref
        out.append(
            f"Transferred from {link} — “{markdown_inline(source.title)}” —"
            f" reported on {code_span(source.api or '?')}. Source re-check of that original bug on the torch used"
            f" here: {markdown_inline(source.source_recheck)}."
        )
    else:
        out.append("Found by fuzzing the API directly; no source issue.")
    if report.transfer is not None:
        rationale = markdown_inline(report.transfer.rationale, limit=1000) or "no rationale recorded"
        out.append(f"Transfer score {report.transfer.score:.3f}: {rationale}.")
    out.append("")
    if report.pattern_formal:
        out += ["Bug pattern (formal notation):", "", _fence(report.pattern_formal), ""]

    out += [f"#### Findings in this report ({len(report.findings)})", ""]
    out += ["| finding | verdict | review | max abs diff | repro | inputs |", "|---|---|---|---|---|---|"]
    for finding in report.findings:
        diff = Evidence.of(finding.evidence).max_abs_diff
        diff = "-" if diff is None else diff
        out.append(
            f"| {finding.id} | {_cell(finding.verdict)} | {_cell(finding.review_status)} | {_cell(diff)}"
            f" | {_cell(finding.repro_file or '-')} | {_cell(finding.inputs_file or '-')} |"
        )
    out += ["", f"Signature: {code_span(report.signature or '(none)')}", ""]

    out += ["#### Confirmation checks (as the fuzzer recorded them on this input)", ""]
    out += ["| check | result | detail |", "|---|---|---|"]
    out += [f"| {_cell(c.name)} | {_cell(c.status)} | {_cell(c.detail)} |" for c in report.checks]
    out.append("")

    out += ["#### Fuzzer checklist (PyTorch's rules for fuzzer-found bugs)", ""]
    out += [f"- {_RULE_BOXES[c.status]} {markdown_inline(c.rule)}: {markdown_inline(c.detail)}" for c in report.rules]
    if not report.rules_met:
        out += ["", "**Before filing:** PyTorch closes fuzzer reports that miss an item above; fix the unchecked ones first."]
    if any(f.verdict == "confirmed" for f in report.findings) and not report.confirmed:
        out += ["", "**Not exported as confirmed:** the fuzzer's verdict was confirmed, but this checklist is not"
                " all ticked, so the report does not claim it."]
    out += ["", f"Suggested labels: {', '.join(code_span(label) for label in report.labels)}", ""]

    env = report.environment
    out += ["### Versions", ""]
    found = ", ".join(markdown_inline(v) for v in report.torch_version_found) or "not recorded"
    out += [
        f"- torch.__version__: {markdown_inline(env.torch_version)} (finding recorded with: {found})",
        f"- Python {markdown_inline(env.python)} on {markdown_inline(env.platform)}",
        "",
        "<details><summary>collect_env</summary>",
        "",
        _fence(env.collect_env),
        "",
        "</details>",
        "",
    ]
    lead = next(f for f in report.findings if f.id == report.representative_finding)
    recorded = Evidence.of(lead.evidence)
    config = {k: v for k, v in (("config", recorded.config), ("config_flags", recorded.config_flags)) if v}
    if config:
        out += ["Config flags:", "", _fence(json.dumps(config, indent=2, sort_keys=True, default=str), "json"), ""]
    return "\n".join(out)
