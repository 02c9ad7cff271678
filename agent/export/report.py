"""Build one report from a group of findings that share a signature (the JSON shape of an export)."""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from agent.export.bundle import BundledRepro
from agent.export.environment import Environment
from agent.export.rules import RuleCheck, all_met, check_rules
from agent.export.title import bracket, mode_words, title
from agent.export.verify import ReproCheck
from agent.review import lineage
from agent.review.checks import recorded_checks
from agent.review.views import formal_text
from agent.text_safety import code_span, markdown_inline, one_line, strip_control
from agent.transfer.source_recheck import recheck_text
from db.queries.findings import FindingRecord, SignatureGroup
from fuzz_core.evidence import Evidence, InputDescription, MeasuredFigures, Minimised
from fuzz_core.oracles.tolerance import default_tolerance


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
    source_recheck: str = "not checked"  # the source re-check with its basis (agent/transfer/source_recheck.py)


class Transfer(BaseModel):
    candidate_id: int
    score: float
    rationale: str


# Note [Confirmed means all ticked]: a report claims "confirmed" only when the fuzzer's verdict is
# confirmed AND every checklist item (rules.py, plus the repro runs with --check-repro) is met;
# otherwise it says plainly that it is not exported as confirmed, instead of arguing against itself.


class ReportCheck(BaseModel):
    name: str
    status: str
    detail: str


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
    repro: str  # the short plain-torch repro when the worker wrote one that exits 1, else the long script
    repro_inputs_file: str | None
    repro_note: str
    short_repro_file: str | None = None
    full_repro_file: str | None = None  # the long oracle script (loads repro_inputs_file), an attachment
    apis: list[str] = []
    root_cause: str = ""
    shrink: dict[str, Any] | None = None
    possible_duplicates: list[dict[str, Any]] = []
    opinfo_known: list[dict[str, Any]] = []
    confirmed: bool = False  # verdict confirmed AND every checklist item ticked (Note [Confirmed means all ticked])
    pattern_formal: str
    source_issue: SourceIssue | None
    transfer: Transfer | None
    findings: list[ReportFinding]
    rules: list[RuleCheck]
    rules_met: bool
    # The representative finding's confirmation checks as fuzz_core recorded them (agent/review/checks.py).
    checks: list[ReportCheck] = []
    labels: list[str]
    torch_version_found: list[str]
    environment: Environment

    @property
    def finding_ids(self) -> list[int]:
        return [f.id for f in self.findings]


def _representative(findings: list[FindingRecord], bundles: dict[int, BundledRepro]) -> FindingRecord:
    """The finding with a short repro (shortest), else the shortest long repro, oldest on ties; else the oldest."""
    with_repro = [f for f in findings if f.id in bundles]
    if not with_repro:
        return findings[0]
    return min(with_repro, key=lambda f: (not bundles[f.id].short_text,
                                          len(bundles[f.id].short_text or bundles[f.id].text), f.id))


def evidence_of(finding: FindingRecord) -> Evidence:
    """The finding's evidence, typed (fuzz_core/evidence.py)."""
    return Evidence.of(finding.evidence)


def minimised(finding: FindingRecord) -> Minimised:
    """The shrink's record; an empty one when the finding was not minimised."""
    return evidence_of(finding).minimised or Minimised()


def figures(finding: FindingRecord) -> MeasuredFigures | None:
    """Per-mode outputs and float64 errors measured on the smallest input (fuzz_core/minimise_finding.py)."""
    value = minimised(finding).figures
    return value if value is not None and value.test_mode is not None else None


def failing_input(finding: FindingRecord) -> InputDescription | None:
    """The input that was run: the smallest failing one when minimised, else the one the campaign kept."""
    shrunk = minimised(finding)
    return (shrunk.described_input if shrunk.input else None) or evidence_of(finding).described_input


def _described(described: InputDescription | dict[str, Any] | None) -> InputDescription | None:
    return described if isinstance(described, InputDescription) else InputDescription.from_dict(described)


def input_condition(described: InputDescription | dict[str, Any] | None) -> str:
    """A title phrase from the failing input itself: "float32 inputs", "an empty float32 tensor", ..."""
    record = _described(described)
    if record is None or record.tensors is None:
        return ""
    tensors = [t for t in record.tensors if t is not None]
    if not tensors:
        return ""
    dtypes = sorted({str(t.dtype if t.dtype is not None else "?").removeprefix("torch.") for t in tensors})
    subject = "/".join(dtypes)
    if all(0 in (t.shape or [1]) for t in tensors):
        return f"an empty {subject} tensor" if len(tensors) == 1 else f"empty {subject} tensors"
    if all(t.shape == [] for t in tensors):
        return f"{subject} scalars (0-d tensors)"
    extra = " (non-contiguous)" if any(t.contiguous is False for t in tensors) else ""
    return f"{subject} inputs{extra}"


def compute_dtype(test_mode: str, input_dtype: str | None) -> str | None:
    """The dtype the test mode computes in: the low dtype of a precision mode, else the input's."""
    family, _, detail = test_mode.partition(":")
    return detail if family in ("dtype", "autocast") and detail else input_dtype


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
    evidence = evidence_of(finding)
    lines: list[str] = []
    if finding.verdict in ("crash", "hang"):
        lines.append(f"{mode_words(test)} {'crashed' if finding.verdict == 'crash' else 'did not finish'}: {markdown_inline(finding.reason or 'no detail recorded', limit=1000)}")
    elif evidence.max_abs_diff is not None or evidence.max_rel_diff is not None:
        diff = (f"max abs diff {markdown_inline(_fmt(_or_unknown(evidence.max_abs_diff)))}, "
                f"max rel diff {markdown_inline(_fmt(_or_unknown(evidence.max_rel_diff)))}")
        where = ""
        if evidence.mismatch_count is not None:
            where += f" at {markdown_inline(_fmt(evidence.mismatch_count))} element(s)"
        if evidence.first_index is not None:
            # In the coordinates of the differing output (its shape when recorded), not of an input.
            shape = evidence.output_shape
            of = f" of the output (shape {markdown_inline(_fmt(shape))})" if isinstance(shape, list) else " of the output"
            where += f", first at index {markdown_inline(_fmt(evidence.first_index))}{of}"
        output = evidence.location
        in_output = f" in output {code_span(output)}" if isinstance(output, str) and output and output != "out" else ""
        lines.append(f"{mode_words(test)} vs {mode_words(reference)}{in_output}: {diff}{where}")
    elif finding.reason:
        lines.append(markdown_inline(finding.reason, limit=1000))
    if evidence.observed is not None:
        lines.append(f"observed value: {markdown_inline(_fmt(evidence.observed))}")
    measured = figures(finding)
    if measured is not None:
        lines.append(f"{mode_words(test)} returns {markdown_inline(_values(measured.test_values))}, "
                     f"{mode_words(reference)} returns {markdown_inline(_values(measured.reference_values))}, "
                     f"the float64 value is {markdown_inline(_values(measured.float64_values))}")
        if measured.test_error_vs_fp64 is not None:
            lines.append(f"largest distance of {mode_words(test)} from the float64 value: "
                         f"{markdown_inline(_fmt(measured.test_error_vs_fp64))}")
    elif evidence.test_error_vs_fp64 is not None:
        lines.append(f"error of {mode_words(test)} against a float64 computation: "
                     f"{markdown_inline(_fmt(evidence.test_error_vs_fp64))}")
    described = describe_input(failing_input(finding))
    if described:
        lines.append(f"failing input: {markdown_inline(described)}")
    shrink = minimised(finding).shrink
    if shrink is not None and shrink.elements_before is not None:
        lines.append(f"minimised from {markdown_inline(_fmt(shrink.elements_before))} to "
                     f"{markdown_inline(_fmt(shrink.elements_after))} input element(s)")
    return lines or ["(no measurement recorded)"]


def _or_unknown(value: Any) -> Any:
    """A figure an older row lacks reads None: shown as '?'."""
    return "?" if value is None else value


def _values(values: Any) -> str:
    if not isinstance(values, list):
        return "?"
    return "[" + ", ".join(_fmt(v) for v in values) + "]"


def describe_input(described: InputDescription | dict[str, Any] | None) -> str:
    """fuzz_core's input description (describe_sample: tensors with shape, dtype, stride, contiguous) in one line."""
    record = _described(described)
    if record is None or record.tensors is None:
        return ""
    parts = []
    for tensor in record.tensors[:6]:
        if tensor is None:
            continue
        text = f"{tensor.dtype if tensor.dtype is not None else '?'}{list(tensor.shape or [])}"
        if tensor.contiguous is False:
            text += f" non-contiguous (stride {list(tensor.stride or [])})"
        parts.append(text)
    more = len(record.tensors) - 6
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")


def _expected(finding: FindingRecord, reference: str, test: str, dtype: str | None) -> list[str]:
    """Markdown lines (Note [Report text is Markdown])."""
    evidence = evidence_of(finding)
    lines: list[str] = []
    if finding.verdict in ("crash", "hang"):
        lines.append(f"{mode_words(test)} returns what {mode_words(reference)} returns, or raises the same exception")
    else:
        tolerance = default_tolerance(dtype)
        bound = f" (rtol={tolerance[0]:g}, atol={tolerance[1]:g} for {markdown_inline(dtype)})" if tolerance else ""
        lines.append(
            f"{mode_words(test)} matches {mode_words(reference)} within torch.testing's default tolerances{bound},"
            " or is at least as close to a float64 computation"
        )
    if evidence.expected is not None:
        lines.append(f"expected value: {markdown_inline(_fmt(evidence.expected))}")
    measured = figures(finding)
    if measured is not None and measured.reference_error_vs_fp64 is not None:
        lines.append(f"largest distance of {mode_words(reference)} from the float64 value: "
                     f"{markdown_inline(_fmt(measured.reference_error_vs_fp64))}")
    elif evidence.ref_error_vs_fp64 is not None and measured is None:
        lines.append(f"error of {mode_words(reference)} against a float64 computation: "
                     f"{markdown_inline(_fmt(evidence.ref_error_vs_fp64))}")
    return lines


def _description(
    finding: FindingRecord, members: list[FindingRecord], api: str, reference: str, test: str, condition: str
) -> str:
    """A Markdown paragraph (Note [Report text is Markdown])."""
    evidence = evidence_of(finding)
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
    measured = figures(finding)
    if measured is not None:
        ref_err, test_err = measured.reference_error_vs_fp64, measured.test_error_vs_fp64
    else:
        ref_err, test_err = evidence.ref_error_vs_fp64, evidence.test_error_vs_fp64
    test_err = math.inf if test_err == "inf" else test_err
    if isinstance(ref_err, (int, float)) and isinstance(test_err, (int, float)) and test_err > ref_err:
        # The fp64 comparison is what separates a bug from accumulation-order noise.
        sentences.append(
            f"The {mode_words(test)} result is further from a float64 computation than the {mode_words(reference)}"
            f" result ({markdown_inline(_fmt(test_err))} vs {markdown_inline(_fmt(ref_err))}), so this is not reordering noise."
        )
    apis = sorted({lineage.target_api(f) for f in members})
    if len(apis) > 1:
        sentences.append(f"The same fault shows in {', '.join(code_span(a) for a in apis)} (one root cause: the"
                         f" same symptom where the divergence starts); every finding is listed below.")
    elif len(members) > 1:
        sentences.append(f"{len(members)} findings with the same root cause show it; they are listed below.")
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


def _rule_evidence(finding: FindingRecord) -> Evidence:
    """The evidence the checklist reads, with the float64 errors measured on the smallest input when there are some."""
    evidence = evidence_of(finding)  # a fresh object: the finding's stored evidence is not changed
    measured = figures(finding)
    if measured is not None and measured.reference_error_vs_fp64 is not None and \
            measured.test_error_vs_fp64 is not None:
        evidence.ref_error_vs_fp64 = measured.reference_error_vs_fp64
        evidence.test_error_vs_fp64 = measured.test_error_vs_fp64
    return evidence


def build_report(
    number: int, group: SignatureGroup, environment: Environment, bundles: dict[int, BundledRepro] | None = None,
    *, root_cause: str = "", possible_duplicates: list[dict[str, Any]] | None = None,
    opinfo_known: list[dict[str, Any]] | None = None,
) -> Report:
    """One report for a group (root cause, Note [Root-cause groups]); ``bundles`` are the repro files already written.

    Title, dtype and figures come from the failing input that ran (the smallest one when minimised), never
    from the pattern's trigger; the shown repro is the short one when the worker saw it exit 1.
    """
    bundles = bundles or {}
    members = group.findings
    lead = _representative(members, bundles)
    lead_bundle = bundles.get(lead.id)
    api = lineage.target_api(lead)
    reference, test = lineage.mode_pair(lead)
    kind = lineage.kind(lead)
    ran = failing_input(lead)
    input_dtypes = sorted({t.dtype.removeprefix("torch.") for t in (ran.tensors or []) if t is not None and t.dtype}
                          ) if ran is not None else []
    dtype = input_dtypes[0] if len(input_dtypes) == 1 else lineage.dtype(lead)
    condition = input_condition(ran) or lineage.describe_trigger(lineage.trigger(lead), dtype)
    ablation = evidence_of(lead).backend_ablation
    shown_repro = (lead_bundle.short_text or lead_bundle.text) if lead_bundle else ""
    rules = check_rules(
        api=api,
        reference_mode=reference,
        test_mode=test,
        evidence=_rule_evidence(lead),
        repro=shown_repro,
        collect_env_ok=not environment.collect_env.startswith("("),
        dtype=compute_dtype(test, dtype),
    )
    shrink = minimised(lead).shrink
    versions = sorted({str(v) for v in (evidence_of(f).torch_version for f in members) if v})
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
        expected=_expected(lead, reference, test, compute_dtype(test, dtype)),
        backend_ablation=ablation if isinstance(ablation, dict) else {},
        representative_finding=lead.id,
        repro=shown_repro,
        repro_inputs_file=lead_bundle.inputs_file if lead_bundle else None,
        repro_note=lead_bundle.note if lead_bundle else "",
        short_repro_file=lead_bundle.short_file if lead_bundle else None,
        full_repro_file=lead_bundle.repro_file if lead_bundle else None,
        apis=sorted({lineage.target_api(f) for f in members}),
        root_cause=root_cause,
        shrink=shrink.to_dict() if shrink is not None else None,
        possible_duplicates=list(possible_duplicates or []),
        opinfo_known=list(opinfo_known or []),
        confirmed=lead.verdict == "confirmed" and all_met(rules),
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
            source_recheck=recheck_text(lead.pattern.source_recheck, lead.pattern.source_reproduces)
            if lead.pattern else "not checked",
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
        checks=[ReportCheck(name=c.name, status=c.status, detail=c.detail)
                for c in recorded_checks(lead.verdict, lead.evidence)],
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
    return report.model_copy(update={"rules": rules, "rules_met": all_met(rules),
                                     "confirmed": report.confirmed and all_met(rules)})
