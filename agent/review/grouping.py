"""Group findings by root cause: the symptom plus where the divergence starts, not the API name.

Note [Root-cause groups]: var_mean and std_mean on an empty tensor under inductor are one bug
(std_mean reduces through var_mean's kernel), yet their signatures differ because signatures
contain the API. A group's key is
  symptom (verdict, failure kind, mode pair, "empty input" when every tensor is empty)
  + locus: the first diverging ATen op from localisation (fuzz_core/localise.py's
    `first_divergent_op`, overload dropped) when the evidence has one, else the API's normalised
    op family (namespace and in-place suffix dropped, nan-variants and std folded onto the
    reduction they share a kernel with).
So one report lists every API that shows the same fault.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.review import lineage
from db.queries.findings import FindingRecord, SignatureGroup
from fuzz_core.evidence import Evidence

# Ops that reduce through another op's kernel: std is sqrt(var), nan-variants mask then reduce.
_SHARED_KERNEL = {"std": "var", "std_mean": "var_mean", "nanstd": "var"}


@dataclass(frozen=True)
class RootCause:
    key: str
    symptom: str  # e.g. "confirmed value mismatch, eager vs compile:inductor, empty input"
    locus: str  # "aten.var_mean" or "op family var_mean"
    from_localisation: bool


@dataclass
class RootCauseGroup:
    cause: RootCause
    findings: list[FindingRecord] = field(default_factory=list)

    @property
    def apis(self) -> list[str]:
        return sorted({lineage.target_api(f) for f in self.findings})

    def as_signature_group(self) -> SignatureGroup:
        return SignatureGroup(key=self.cause.key, findings=self.findings)

    @property
    def label(self) -> str:
        """``g12``: named after its oldest finding, so a filtered listing shows the same label."""
        return f"g{self.findings[0].id}"

    def describe(self) -> str:
        """One line for a listing's legend: symptom, locus, members."""
        ids = ", ".join(str(f.id) for f in self.findings)
        return f"{self.cause.symptom}; divergence at {self.cause.locus}; findings {ids} ({', '.join(self.apis)})"


def op_family(api: str) -> str:
    """``torch.special.logit`` → ``logit``; ``torch.Tensor.add_`` → ``add``; ``torch.std_mean`` → ``var_mean``."""
    leaf = api.rsplit(".", 1)[-1].rstrip("_") or api
    if leaf in _SHARED_KERNEL:
        return _SHARED_KERNEL[leaf]
    return leaf


def failure_kind(finding: FindingRecord) -> str:
    """``value``, ``nan_inf``, ``exception:RuntimeError``, ``shape`` ...: the campaign's failure key without its path."""
    minimised = Evidence.of(finding.evidence).minimised
    key = minimised.failure_key if minimised is not None else None
    if not key:
        key = finding.signature.rsplit("|", 1)[-1] if finding.signature else finding.verdict
    head, _, rest = key.partition(":")
    return key if head == "exception" else head


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


def root_cause(finding: FindingRecord) -> RootCause:
    reference, test = lineage.mode_pair(finding)
    kind = failure_kind(finding)
    evidence = Evidence.of(finding.evidence)
    empty = _all_empty(evidence)
    symptom = f"{finding.verdict} {kind.replace('_', '/') if kind == 'nan_inf' else kind} mismatch, {reference} vs {test}"
    if empty:
        symptom += ", empty input"
    op = localised_op(evidence)
    locus = op if op is not None else f"op family {op_family(lineage.target_api(finding))}"
    key = "|".join([finding.verdict, kind, f"{reference}->{test}", "empty" if empty else "", locus])
    return RootCause(key=key, symptom=symptom, locus=locus, from_localisation=op is not None)


def group_by_root_cause(findings: list[FindingRecord]) -> list[RootCauseGroup]:
    """Groups in order of their oldest finding; members oldest first."""
    groups: dict[str, RootCauseGroup] = {}
    for finding in sorted(findings, key=lambda f: f.id):
        cause = root_cause(finding)
        groups.setdefault(cause.key, RootCauseGroup(cause)).findings.append(finding)
    return list(groups.values())


def groups_by_finding(groups: list[RootCauseGroup]) -> dict[int, RootCauseGroup]:
    """Finding id → its group."""
    return {finding.id: group for group in groups for finding in group.findings}
