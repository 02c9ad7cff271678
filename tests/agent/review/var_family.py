"""Real rows for grouping tests: one reported var overflow under torch.compile, transferred to its siblings.

issue → pattern (torch.var, eager vs compile:inductor) → candidates torch.var (the source re-check), torch.std,
torch.var_mean, torch.std_mean and torch.sum → one harness each → findings with the signatures fuzz_core writes.
Beside them: a `fuzz api` harness (no candidate) for torch.var_mean and one for torch.std_mean.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from db.models import Candidate, Finding, Harness, Issue, Pattern
from db.queries.findings import record_review
from tests.agent.review.rows import WRONG_REPRO, evidence

MODES = ("eager", "compile:inductor")
KIND = "Compile_Eager_Mismatch"


def signature(api: str, failure: str, modes: tuple[str, str] = MODES) -> str:
    return f"{api}|{modes[0]}->{modes[1]}|{KIND}|{failure}"


@dataclass
class VarFamily:
    issue_id: int
    pattern_id: int
    candidate_ids: dict[str, int] = field(default_factory=dict)  # target API → candidate id
    harness_ids: dict[str, int] = field(default_factory=dict)  # target API (or "direct:<api>") → harness id
    finding_ids: dict[str, int] = field(default_factory=dict)  # a name the tests use → finding id


def _spec(api: str, modes: tuple[str, str] = MODES) -> dict[str, object]:
    return {"api": api, "reference_mode": modes[0], "test_mode": modes[1], "dtype": "float16",
            "trigger": {"dtypes": ["float16"], "special_values": ["huge"]}, "oracle": "value", "seed": 0, "kind": KIND}


def add(session: Session, harness_id: int, api: str, failure: str, *, verdict: str = "confirmed",
        review_status: str = "unreviewed", modes: tuple[str, str] = MODES) -> int:
    finding = Finding(harness_id=harness_id, verdict=verdict, reason=f"{verdict}: {api} overflows under compile",
                      evidence=evidence(dtype="float16"), repro=WRONG_REPRO,
                      signature=signature(api, failure, modes) if verdict != "passed" else "",
                      review_status=review_status)
    session.add(finding)
    session.flush()
    return finding.id


def build_var_family(session: Session) -> VarFamily:
    """The rows and findings every grouping test reads (see the module docstring)."""
    issue = Issue(repo="pytorch/pytorch", number=112, title="torch.compile: var() overflows in float16",
                  body="...", url="https://github.com/pytorch/pytorch/issues/112", content_hash="1" * 64)
    session.add(issue)
    session.flush()
    pattern = Pattern(issue_id=issue.id, kind=KIND, api="torch.var", reference_mode=MODES[0], test_mode=MODES[1],
                      trigger={"dtypes": ["float16"], "special_values": ["huge"]},
                      oracle={"kind": "ValueCorrectness", "tol": 0.001},
                      formal="Compile_Eager_Mismatch ::= APICall(torch.var)[mode=eager] → v1", confidence=0.8,
                      extractor="offline", extractor_version="1")
    session.add(pattern)
    session.flush()
    family = VarFamily(issue_id=issue.id, pattern_id=pattern.id)
    for api in ("torch.var", "torch.std", "torch.var_mean", "torch.std_mean", "torch.sum"):
        candidate = Candidate(pattern_id=pattern.id, target_api=api, score=0.9, rationale="reduction like var",
                              adapted_trigger={"dtypes": ["float16"]})
        session.add(candidate)
        session.flush()
        harness = Harness(candidate_id=candidate.id, spec=_spec(api), status="done")
        session.add(harness)
        session.flush()
        family.candidate_ids[api] = candidate.id
        family.harness_ids[api] = harness.id
    for api in ("torch.var_mean", "torch.std_mean"):
        direct = Harness(candidate_id=None, spec=_spec(api, ("eager", "jit.trace")), status="done")
        session.add(direct)
        session.flush()
        family.harness_ids[f"direct:{api}"] = direct.id
    h = family.harness_ids
    family.finding_ids.update(
        var=add(session, h["torch.var"], "torch.var", "nan_inf:out"),
        std=add(session, h["torch.std"], "torch.std", "nan_inf:out"),
        var_mean=add(session, h["torch.var_mean"], "torch.var_mean", "nan_inf:out[0]"),
        std_mean=add(session, h["torch.std_mean"], "torch.std_mean", "nan_inf:out[0]", verdict="suspicious"),
        # The same report and failure in sum: another op, another kernel.
        sum_overflow=add(session, h["torch.sum"], "torch.sum", "nan_inf:out"),
        # The same report and op, but std fails another way: a value mismatch, not an overflow.
        std_value=add(session, h["torch.std"], "torch.std", "value:out"),
        var_passed=add(session, h["torch.var"], "torch.var", "", verdict="passed"),
        std_passed=add(session, h["torch.std"], "torch.std", "", verdict="passed"),
        # No pattern (`fuzz api`): grouped by op family, which torch._refs folds onto var.
        direct_var_mean=add(session, h["direct:torch.var_mean"], "torch.var_mean", "value:out[0]",
                            modes=("eager", "jit.trace")),
        direct_std_mean=add(session, h["direct:torch.std_mean"], "torch.std_mean", "value:out[0]",
                            modes=("eager", "jit.trace")),
        # A second overflow of var, already rejected by a reviewer (as the review page records it).
        var_rejected=add(session, h["torch.var"], "torch.var", "nan_inf:out"),
    )
    record_review(session, family.finding_ids["var_rejected"], decision="rejected", reviewer="ann",
                  note="the float64 reference overflows too")
    return family
