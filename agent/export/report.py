"""Build one report from a group of findings that share a signature (the JSON shape of an export)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from agent.export.bundle import BundledRepro
from agent.export.environment import Environment
from agent.export.rules import DEFAULT_TOLERANCES, RuleCheck, all_met, check_rules
from agent.export.title import bracket, mode_words, title
from agent.export.verify import ReproCheck
from agent.review import lineage
from agent.review.views import formal_text
from agent.text_safety import code_span, markdown_inline, one_line, strip_control
from db.queries.findings import FindingRecord, SignatureGroup


class ReportFinding(BaseModel):
    id: int
    verdict: str
    review_status: str
    reason: str
    evidence: dict[str, Any]
    repro_file: str | None
    inputs_file: str | None
    repro_note: str
    harness_id: int
    run_id: int | None
    created_at: datetime


class SourceIssue(BaseModel):
    repo: str
    number: int
    title: str
    url: str
    api: str | None
    source_reproduces: bool | None


class Transfer(BaseModel):
    candidate_id: int
    score: float
    rationale: str


class Report(BaseModel):
    number: int
    slug: str
    title: str
    bracket: str
    api: str
    kind: str
    reference_mode: str
    test_mode: str
    dtype: str | None
    signature: str
    description: str
    observed: list[str]
    expected: list[str]
    backend_ablation: dict[str, Any]
    representative_finding: int
    repro: str
    repro_inputs_file: str | None
    repro_note: str
    pattern_formal: str
    source_issue: SourceIssue | None
    transfer: Transfer | None
    findings: list[ReportFinding]
    rules: list[RuleCheck]
    rules_met: bool
    labels: list[str]
    torch_version_found: list[str]
    environment: Environment

    @property
    def finding_ids(self) -> list[int]:
        return [f.id for f in self.findings]


def _representative(findings: list[FindingRecord], bundles: dict[int, BundledRepro]) -> FindingRecord:
    """The finding whose repro is shortest (the most minimal), oldest on ties; the oldest if none has one."""
    with_repro = [f for f in findings if f.id in bundles]
    if not with_repro:
        return findings[0]
    return min(with_repro, key=lambda f: (len(bundles[f.id].text), f.id))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "report"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


# Note [Report text is Markdown]: description, observed and expected are Markdown fragments; every
# piece of data in them (API names, reasons, evidence values, issue references) is escaped where it
# is put in (markdown_inline / code_span), so the renderer adds them as they are.


def _observed(finding: FindingRecord, reference: str, test: str) -> list[str]:
    """Markdown lines (Note [Report text is Markdown])."""
    evidence = finding.evidence
    lines: list[str] = []
    if finding.verdict in ("crash", "hang"):
        lines.append(f"{mode_words(test)} {'crashed' if finding.verdict == 'crash' else 'did not finish'}: {markdown_inline(finding.reason or 'no detail recorded', limit=1000)}")
    elif "max_abs_diff" in evidence or "max_rel_diff" in evidence:
        diff = (f"max abs diff {markdown_inline(_fmt(evidence.get('max_abs_diff', '?')))}, "
                f"max rel diff {markdown_inline(_fmt(evidence.get('max_rel_diff', '?')))}")
        where = ""
        if "mismatch_count" in evidence:
            where += f" at {markdown_inline(_fmt(evidence['mismatch_count']))} element(s)"
        if "first_index" in evidence:
            where += f", first at index {markdown_inline(_fmt(evidence['first_index']))}"
        output = evidence.get("location")
        in_output = f" in output {code_span(output)}" if isinstance(output, str) and output and output != "out" else ""
        lines.append(f"{mode_words(test)} vs {mode_words(reference)}{in_output}: {diff}{where}")
    elif finding.reason:
        lines.append(markdown_inline(finding.reason, limit=1000))
    if "observed" in evidence:
        lines.append(f"observed value: {markdown_inline(_fmt(evidence['observed']))}")
    if "test_error_vs_fp64" in evidence:
        lines.append(f"error of {mode_words(test)} against a float64 computation: "
                     f"{markdown_inline(_fmt(evidence['test_error_vs_fp64']))}")
    failing_input = describe_input(evidence.get("input"))
    if failing_input:
        lines.append(f"failing input: {markdown_inline(failing_input)}")
    return lines or ["(no measurement recorded)"]


def describe_input(described: Any) -> str:
    """fuzz_core's input description ({"tensors": [{shape, dtype, stride, contiguous}]}) in one line."""
    if not isinstance(described, dict) or not isinstance(described.get("tensors"), list):
        return ""
    parts = []
    for tensor in described["tensors"][:6]:
        if not isinstance(tensor, dict):
            continue
        text = f"{tensor.get('dtype', '?')}{list(tensor.get('shape', []))}"
        if tensor.get("contiguous") is False:
            text += f" non-contiguous (stride {list(tensor.get('stride', []))})"
        parts.append(text)
    more = len(described["tensors"]) - 6
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")


def _expected(finding: FindingRecord, reference: str, test: str, dtype: str | None) -> list[str]:
    """Markdown lines (Note [Report text is Markdown])."""
    evidence = finding.evidence
    lines: list[str] = []
    if finding.verdict in ("crash", "hang"):
        lines.append(f"{mode_words(test)} returns what {mode_words(reference)} returns, or raises the same exception")
    else:
        tolerance = DEFAULT_TOLERANCES.get(dtype or "")
        bound = f" (rtol={tolerance[0]:g}, atol={tolerance[1]:g} for {markdown_inline(dtype)})" if tolerance else ""
        lines.append(
            f"{mode_words(test)} matches {mode_words(reference)} within torch.testing's default tolerances{bound},"
            " or is at least as close to a float64 computation"
        )
    if "expected" in evidence:
        lines.append(f"expected value: {markdown_inline(_fmt(evidence['expected']))}")
    if "ref_error_vs_fp64" in evidence:
        lines.append(f"error of {mode_words(reference)} against a float64 computation: "
                     f"{markdown_inline(_fmt(evidence['ref_error_vs_fp64']))}")
    return lines


def _description(
    finding: FindingRecord, members: list[FindingRecord], api: str, reference: str, test: str, condition: str
) -> str:
    """A Markdown paragraph (Note [Report text is Markdown])."""
    evidence = finding.evidence
    sentences: list[str] = []
    when = f" on {markdown_inline(condition)}" if condition else ""
    api_code = code_span(api)
    if finding.verdict == "crash":
        sentences.append(f"{api_code} crashes under {mode_words(test)}{when}, where {mode_words(reference)} does not.")
    elif finding.verdict == "hang":
        sentences.append(f"{api_code} does not finish under {mode_words(test)}{when}, where {mode_words(reference)} does.")
    elif reference == test:
        sentences.append(f"{api_code} returns wrong values in {mode_words(test)}{when}.")
    else:
        sentences.append(f"{api_code} returns different values under {mode_words(test)} than under {mode_words(reference)}{when}.")
    ref_err, test_err = evidence.get("ref_error_vs_fp64"), evidence.get("test_error_vs_fp64")
    if isinstance(ref_err, (int, float)) and isinstance(test_err, (int, float)) and test_err > ref_err:
        # The fp64 comparison is what separates a bug from accumulation-order noise.
        sentences.append(
            f"The {mode_words(test)} result is further from a float64 computation than the {mode_words(reference)}"
            f" result ({markdown_inline(_fmt(test_err))} vs {markdown_inline(_fmt(ref_err))}), so this is not reordering noise."
        )
    if len(members) > 1:
        sentences.append(f"{len(members)} findings with the same signature show it; they are listed below.")
    if finding.issue is not None and finding.pattern is not None:
        sentences.append(
            f"TransFuzz found it by transferring the bug pattern of"
            f" {markdown_inline(f'{finding.issue.repo}#{finding.issue.number}')}"
            f" (on {code_span(finding.pattern.api or '?')}) to {api_code}."
        )
    sentences.append(f"TransFuzz verdict: {markdown_inline(finding.verdict)}"
                     + (f" — {markdown_inline(finding.reason, limit=1000)}" if finding.reason else "."))
    return " ".join(sentences)


def _labels(kind: str, reference: str, test: str, verdict: str) -> list[str]:
    labels = ["topic: fuzzer"]
    if verdict == "crash":
        labels.append("module: crash")
    elif kind not in ("Exception_Mismatch", "Crash"):
        labels.append("module: correctness (silent)")
    modes = (reference, test)
    if any(m.startswith("compile:") for m in modes):
        labels += ["oncall: pt2", "module: pt2 accuracy"] if verdict not in ("crash", "hang") else ["oncall: pt2"]
    if any(m.startswith("jit.") for m in modes):
        labels.append("oncall: jit")
    if any(m.startswith(("dtype:", "autocast:")) for m in modes):
        labels.append("module: half")
    return labels


def build_report(
    number: int, group: SignatureGroup, environment: Environment, bundles: dict[int, BundledRepro] | None = None
) -> Report:
    """One report for a signature group; ``bundles`` are the repro files already written for its findings."""
    bundles = bundles or {}
    members = group.findings
    lead = _representative(members, bundles)
    lead_bundle = bundles.get(lead.id)
    api = lineage.target_api(lead)
    reference, test = lineage.mode_pair(lead)
    kind = lineage.kind(lead)
    dtype = lineage.dtype(lead)
    condition = lineage.describe_trigger(lineage.trigger(lead), dtype)
    ablation = lead.evidence.get("backend_ablation")
    rules = check_rules(
        api=api,
        reference_mode=reference,
        test_mode=test,
        evidence=lead.evidence,
        repro=lead_bundle.text if lead_bundle else "",
        collect_env_ok=not environment.collect_env.startswith("("),
        dtype=dtype,
    )
    versions = sorted({str(f.evidence["torch_version"]) for f in members if f.evidence.get("torch_version")})
    return Report(
        number=number,
        slug=f"{number:03d}-{_slug(api + '-' + kind)}",
        title=title(api, reference, test, kind, lead.verdict, condition),
        bracket=bracket(reference, test, kind, lead.verdict),
        api=api,
        kind=kind,
        reference_mode=reference,
        test_mode=test,
        dtype=dtype,
        signature=lead.signature,
        description=_description(lead, members, api, reference, test, condition),
        observed=_observed(lead, reference, test),
        expected=_expected(lead, reference, test, dtype),
        backend_ablation=ablation if isinstance(ablation, dict) else {},
        representative_finding=lead.id,
        repro=lead_bundle.text if lead_bundle else "",
        repro_inputs_file=lead_bundle.inputs_file if lead_bundle else None,
        repro_note=lead_bundle.note if lead_bundle else "",
        pattern_formal=formal_text(lead),
        source_issue=None
        if lead.issue is None
        else SourceIssue(
            repo=lead.issue.repo,
            number=lead.issue.number,
            title=one_line(lead.issue.title),
            url=lineage.source_issue_url(lead) or "",
            api=lead.pattern.api if lead.pattern else None,
            source_reproduces=lead.pattern.source_reproduces if lead.pattern else None,
        ),
        transfer=None
        if lead.candidate is None
        else Transfer(candidate_id=lead.candidate.id, score=lead.candidate.score,
                      rationale=strip_control(lead.candidate.rationale, keep_newlines=True)),
        findings=[
            ReportFinding(
                id=f.id,
                verdict=f.verdict,
                review_status=f.review_status,
                reason=strip_control(f.reason, keep_newlines=True),
                evidence=f.evidence,
                repro_file=bundles[f.id].repro_file if f.id in bundles else None,
                inputs_file=bundles[f.id].inputs_file if f.id in bundles else None,
                repro_note=bundles[f.id].note if f.id in bundles else "",
                harness_id=f.harness_id,
                run_id=f.run_id,
                created_at=f.created_at,
            )
            for f in members
        ],
        rules=rules,
        rules_met=all_met(rules),
        labels=_labels(kind, reference, test, lead.verdict),
        torch_version_found=versions,
        environment=environment,
    )


def with_repro_checks(report: Report, checks: list[ReproCheck]) -> Report:
    """Add the outcome of running the group's repro scripts to the checklist."""
    if not checks:
        return report
    wrong = [c for c in checks if c.agrees is False]
    if wrong:
        detail = "; ".join(
            f"repro_{c.finding_id}.py exited {c.exit_code if c.exit_code is not None else 'by timeout'}, expected {c.expected_exit}"
            for c in wrong
        )
        rule = RuleCheck(rule="repro reproduces the verdict", status="not_met", detail=detail)
    elif all(c.agrees is None for c in checks):
        rule = RuleCheck(rule="repro reproduces the verdict", status="unclear", detail="these verdicts promise no exit code")
    else:
        rule = RuleCheck(
            rule="repro reproduces the verdict",
            status="met",
            detail=f"{sum(1 for c in checks if c.agrees)} script(s) run in a fresh interpreter gave the expected exit code",
        )
    rules = [*report.rules, rule]
    return report.model_copy(update={"rules": rules, "rules_met": all_met(rules)})
