"""Render a report as the Markdown body of a PyTorch issue for a fuzzer-found bug."""

from __future__ import annotations

import json

from agent.export.report import Report

_RULE_BOXES = {"met": "[x]", "n/a": "[x]", "not_met": "[ ]", "unclear": "[ ]"}


def _fence(text: str, language: str = "") -> str:
    # A repro that itself contains ``` must not end our block early.
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _cell(value: object) -> str:
    if isinstance(value, float):
        value = f"{value:.6g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report) -> str:
    out: list[str] = [f"# {report.title}", ""]
    out += ["### 🐛 Describe the bug", "", report.description, ""]

    out += ["#### Minimal repro", ""]
    if report.repro.strip():
        out += [
            f"Standalone, plain torch (also written as `repro_{report.representative_finding}.py`"
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
        reproduces = {True: "still reproduces", False: "no longer reproduces", None: "was not re-checked"}[
            source.source_reproduces
        ]
        out.append(
            f"Transferred from [{source.repo}#{source.number}]({source.url}) — “{source.title}” —"
            f" reported on `{source.api or '?'}`; that original bug {reproduces} on the torch used here."
        )
    else:
        out.append("Found by fuzzing the API directly; no source issue.")
    if report.transfer is not None:
        out.append(f"Transfer score {report.transfer.score:.3f}: {report.transfer.rationale or 'no rationale recorded'}.")
    out.append("")
    if report.pattern_formal:
        out += ["Bug pattern (formal notation):", "", _fence(report.pattern_formal), ""]

    out += [f"#### Findings in this report ({len(report.findings)})", ""]
    out += ["| finding | verdict | review | max abs diff | repro | inputs |", "|---|---|---|---|---|---|"]
    for finding in report.findings:
        diff = finding.evidence.get("max_abs_diff", "-")
        out.append(
            f"| {finding.id} | {finding.verdict} | {finding.review_status} | {_cell(diff)} | {finding.repro_file or '-'}"
            f" | {finding.inputs_file or '-'} |"
        )
    out += ["", f"Signature: `{report.signature or '(none)'}`", ""]

    out += ["#### Fuzzer checklist (PyTorch's rules for fuzzer-found bugs)", ""]
    out += [f"- {_RULE_BOXES[c.status]} {c.rule}: {c.detail}" for c in report.rules]
    if not report.rules_met:
        out += ["", "**Before filing:** PyTorch closes fuzzer reports that miss an item above; fix the unchecked ones first."]
    out += ["", f"Suggested labels: {', '.join(f'`{label}`' for label in report.labels)}", ""]

    env = report.environment
    out += ["### Versions", ""]
    found = ", ".join(report.torch_version_found) or "not recorded"
    out += [
        f"- torch.__version__: {env.torch_version} (finding recorded with: {found})",
        f"- Python {env.python} on {env.platform}",
        "",
        "<details><summary>collect_env</summary>",
        "",
        _fence(env.collect_env),
        "",
        "</details>",
        "",
    ]
    lead = next(f for f in report.findings if f.id == report.representative_finding)
    config = {k: v for k, v in lead.evidence.items() if k in ("config", "config_flags")}
    if config:
        out += ["Config flags:", "", _fence(json.dumps(config, indent=2, sort_keys=True, default=str), "json"), ""]
    return "\n".join(out)
