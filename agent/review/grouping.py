"""Group findings by root cause: one function for `review list`, the web queue and every export.

Note [Root-cause groups]
A root cause is one fault that one fix removes. Two findings show the same fault when they fail
the same way, under the same mode pair, in the same op, for the same reported reason. The key is:

  failure  the failure class the campaign recorded (the signature's last field without its path:
           ``value``, ``nan_inf``, ``shape``, ``exception:RuntimeError``; ``crash``/``hang``/``error``
           for those verdicts; ``flaky `` in front for a flaky one) and "empty input" when every
           input tensor is empty. Confirmed and suspicious share a class: the verdict says how sure
           the checks are, not which bug it is.
  modes    the (reference, test) mode pair that ran.
  source   the pattern the harness came from (one reported bug), or none for a `fuzz api` harness.
           Two reports that hit the same op the same way stay two groups: each report's trigger
           is a different way in, and "already reported?" (agent/review/known.py) links them.
  op       the op family: the first diverging ATen op from localisation (fuzz_core/localise.py)
           when the evidence has one, else the API's leaf name; namespace, overload and in-place
           suffix dropped, case and underscores ignored (torch.nn.LayerNorm, F.layer_norm), and an
           op that torch's own reference implementation (torch._refs) computes through another op
           folded onto that op: std = sqrt(var), var_mean = (var, mean), std_mean from var_mean
           (checked against torch._refs by tests/agent/review/test_grouping.py). So var, std,
           var_mean and std_mean from one overflow report are one group, while the same report's
           transfer to sum, or an elementwise sibling with its own kernel, is a group of its own.
Findings that did not fail (passed, not_applicable, inconclusive) have no root cause: each is a
group of its own, described by its verdict.

Groups are ordered by their oldest finding and named after it (``g12``), so a filtered listing
shows the same label as an unfiltered one when both group the same findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.review import lineage
from db.queries.findings import FindingRecord, SignatureGroup
from fuzz_core.evidence import Evidence

# Verdicts that record no failure: nothing to find a cause for.
NO_FAILURE = ("passed", "not_applicable", "inconclusive")
# Most severe first: the verdict a group shows for itself.
VERDICT_ORDER = ("confirmed", "suspicious", "crash", "hang", "flaky", "error", "inconclusive", "not_applicable", "passed")

# torch._refs computes these through another op (std = sqrt(var(...)), var_mean = (var(...), mean(...)),
# std_mean = sqrt of var_mean's var); the test checks each entry against torch._refs' source.
BUILT_ON = {"std": "var", "var_mean": "var", "std_mean": "var_mean"}


@dataclass(frozen=True)
class RootCause:
    key: str
    symptom: str  # e.g. "value mismatch, eager vs compile:inductor, empty input"
    locus: str  # "op family var" or "op family var (first diverging op aten.var)"; "" for no failure
    source: str | None  # "the report of torch.var (pytorch/pytorch#112, pattern 3)"; None without a pattern
    anchor: str  # where the op family came from: "localisation", "api" or "none" (a finding that did not fail)

    @property
    def from_localisation(self) -> bool:
        return self.anchor == "localisation"

    @property
    def text(self) -> str:
        """"value mismatch, eager vs compile:inductor; from the report of torch.var (...)": a report's root-cause line."""
        if self.anchor == "none":
            return self.symptom
        return f"{self.symptom}; {self.locus}" + (f"; from {self.source}" if self.source else "")


@dataclass
class RootCauseGroup:
    """Findings that share one root cause (Note [Root-cause groups]), oldest first."""

    cause: RootCause
    findings: list[FindingRecord] = field(default_factory=list)

    @property
    def apis(self) -> list[str]:
        return sorted({lineage.target_api(f) for f in self.findings})

    @property
    def has_cause(self) -> bool:
        """False for a finding that did not fail (passed, not_applicable, inconclusive): a group of one that
        listings and legends do not show as a group."""
        return self.cause.anchor != "none"

    @property
    def label(self) -> str:
        """``g12``: named after its oldest finding, so a filtered listing shows the same label."""
        return f"g{self.findings[0].id}"

    @property
    def size(self) -> int:
        return len(self.findings)

    @property
    def verdict(self) -> str:
        """The most severe verdict among the members (confirmed before suspicious before crash ...)."""
        return min((f.verdict for f in self.findings),
                   key=lambda v: VERDICT_ORDER.index(v) if v in VERDICT_ORDER else len(VERDICT_ORDER))

    @property
    def representative(self) -> FindingRecord:
        """The member to open first: the oldest one with the group's most severe verdict."""
        return next(f for f in self.findings if f.verdict == self.verdict)

    def as_signature_group(self) -> SignatureGroup:
        return SignatureGroup(key=self.cause.key, findings=self.findings)

    def describe(self) -> str:
        """One line for a listing's legend: symptom, locus, members."""
        ids = ", ".join(str(f.id) for f in self.findings)
        return f"{self.cause.text}; finding{'s' if self.size > 1 else ''} {ids} ({', '.join(self.apis)})"


def op_family(name: str) -> str:
    """``torch.special.logit`` → ``logit``; ``torch.Tensor.add_`` → ``add``; ``torch.std_mean`` → ``var``;
    ``torch.nn.LayerNorm`` and ``aten.layer_norm.default`` → ``layernorm``."""
    parts = name.split(".")
    if parts[0] == "aten" and len(parts) > 1:
        parts = parts[:2]  # aten.var.correction → aten.var
    leaf = parts[-1].rstrip("_").lower() or name
    while leaf in BUILT_ON:
        leaf = BUILT_ON[leaf]
    return leaf.replace("_", "")


def failure_kind(finding: FindingRecord) -> str:
    """``value``, ``nan_inf``, ``exception:RuntimeError``, ``shape`` ...: the campaign's failure key without its path."""
    minimised = Evidence.of(finding.evidence).minimised
    key = minimised.failure_key if minimised is not None else None
    if not key:
        key = finding.signature.rsplit("|", 1)[-1] if finding.signature else finding.verdict
    head, _, rest = key.partition(":")
    return key if head == "exception" else head


def failure_class(finding: FindingRecord) -> str:
    """The failure part of the key: crash/hang/error by verdict, else the failure kind; ``flaky`` marked."""
    if finding.verdict in ("crash", "hang", "error"):
        return finding.verdict
    kind = failure_kind(finding)
    return f"flaky {kind}" if finding.verdict == "flaky" else kind


def _all_empty(evidence: Evidence | dict[str, Any]) -> bool:
    described = Evidence.of(evidence).described_input
    tensors = described.tensors if described is not None else None
    if not tensors:
        return False
    return all(t is not None and 0 in (t.shape or [1]) for t in tensors)


def localised_op(evidence: Evidence | dict[str, Any]) -> str | None:
    """The first diverging ATen op recorded by localisation (top level or under "localisation"), overload dropped."""
    ev = Evidence.of(evidence)
    for op in (ev.divergent_op, ev.localisation.divergent_op if ev.localisation is not None else None):
        if op is not None and op.level == "op" and op.name:
            parts = op.name.split(".")
            return ".".join(parts[:2]) if parts[0] == "aten" and len(parts) > 2 else op.name
    return None


def _symptom(failure: str, reference: str, test: str, empty: bool) -> str:
    if failure in ("crash", "hang", "error"):
        what = {"crash": "worker crash", "hang": "worker hang", "error": "harness error"}[failure]
    else:
        what = f"{failure.replace('nan_inf', 'NaN/Inf')} mismatch"
    return f"{what}, {reference} vs {test}" + (", empty input" if empty else "")


def _source(finding: FindingRecord) -> tuple[str, str | None]:
    """(key part, human text) of the reported bug the finding was transferred from."""
    pattern = finding.pattern
    if pattern is None:
        return "", None
    issue = lineage.source_issue_ref(finding)
    where = f"{issue}, pattern {pattern.id}" if issue else f"pattern {pattern.id}"
    return f"pattern:{pattern.id}", f"the report of {pattern.api or '?'} ({where})"


def _op(finding: FindingRecord) -> tuple[str, str, str]:
    """(anchor, family, human locus): the localised op's family when there is one, else the API's."""
    op = localised_op(finding.evidence)
    if op is not None:
        family = op_family(op)
        return "localisation", family, f"op family {family} (first diverging op {op})"
    family = op_family(lineage.target_api(finding))
    return "api", family, f"op family {family}"


def root_cause(finding: FindingRecord) -> RootCause:
    """The finding's root cause; its ``key`` is what groups share (Note [Root-cause groups])."""
    reference, test = lineage.mode_pair(finding)
    if finding.verdict in NO_FAILURE:
        return RootCause(key=f"finding:{finding.id}", symptom=f"{finding.verdict}, no failure to group",
                         locus="", source=None, anchor="none")
    failure = failure_class(finding)
    empty = _all_empty(finding.evidence)
    source_key, source = _source(finding)
    anchor, family, locus = _op(finding)
    key = "|".join([failure, f"{reference}->{test}", "empty" if empty else "", source_key, f"op:{family}"])
    return RootCause(key=key, symptom=_symptom(failure, reference, test, empty), locus=locus, source=source,
                     anchor=anchor)


def group_by_root_cause(findings: list[FindingRecord]) -> list[RootCauseGroup]:
    """THE grouping of findings (`review list`, the web queue, `transfuzz export`, the page's export).

    Groups come in order of their oldest finding, members oldest first; see Note [Root-cause groups]
    for what one group means. Pass every finding that should be considered together: the function
    groups what it is given and nothing else.
    """
    groups: dict[str, RootCauseGroup] = {}
    for finding in sorted(findings, key=lambda f: f.id):
        cause = root_cause(finding)
        groups.setdefault(cause.key, RootCauseGroup(cause)).findings.append(finding)
    return list(groups.values())


def groups_by_finding(groups: list[RootCauseGroup]) -> dict[int, RootCauseGroup]:
    """Finding id → its group."""
    return {finding.id: group for group in groups for finding in group.findings}
