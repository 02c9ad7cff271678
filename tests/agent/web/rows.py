"""Findings for the review page tests: the review tests' lineage plus a hostile issue and a campaign."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from db.models import Candidate, Harness, Issue, Pattern
from db.queries.campaign import finish_run, start_run
from tests.agent.review.rows import SOURCE_PATTERN, add_finding, build_lineage, spec

HOSTILE_TITLE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> relu wrong'
HOSTILE_RATIONALE = '<a href="javascript:window.__pwned = 3">click</a> javascript:alert(1)'
HOSTILE_REPRO = '# </pre><script>window.__pwned = 4</script>\nimport torch\nprint(torch.relu(torch.ones(1)))\n'


# What agent/transfer/stage.py stores: the ranker's reasons (rank.py's words), then "; check: <the check's reason>".
CHECKED_RATIONALE = ("semantic text similarity 0.62; same category 'activation'; supports the pattern's modes and "
                     "trigger; check: tanh saturates like gelu, so NaN propagation under inductor applies")


@dataclass
class ReviewRows:
    ids: dict[str, int] = field(default_factory=dict)
    run_id: int = 0
    candidates: dict[str, int] = field(default_factory=dict)  # candidates with no finding (the candidate queue)


def add_hostile_lineage(session: Session) -> int:
    """An issue whose title, stored URL and rationale try to run script; returns its harness id."""
    issue = Issue(
        repo="evil/repo",
        number=7,
        title=HOSTILE_TITLE,
        body="",
        url="javascript:window.__pwned = 5",  # what a crafted dump's html_url could hold
        content_hash="1" * 64,
    )
    session.add(issue)
    session.flush()
    pattern = Pattern(
        issue_id=issue.id, kind=SOURCE_PATTERN.kind.value, api="torch.nn.functional.gelu", reference_mode="eager",
        test_mode="compile:inductor", trigger={}, oracle={}, formal="<b>not bold</b>", confidence=0.5,
        extractor="offline", extractor_version="1",
    )
    session.add(pattern)
    session.flush()
    candidate = Candidate(pattern_id=pattern.id, target_api="torch.tanh", score=0.5, rationale=HOSTILE_RATIONALE)
    session.add(candidate)
    session.flush()
    harness = Harness(candidate_id=candidate.id, spec=spec("torch.tanh", "compile:inductor"), status="done")
    session.add(harness)
    session.flush()
    return harness.id


def add_open_candidates(session: Session, pattern_id: int) -> dict[str, int]:
    """Candidates the transfer stage proposed that have no finding: one checked, one vetoed, one with a pending harness."""
    checked = Candidate(pattern_id=pattern_id, target_api="torch.tanh", score=0.62, rationale=CHECKED_RATIONALE,
                        adapted_trigger={"dtypes": ["float32"], "special_values": ["nan"]}, status="proposed")
    vetoed = Candidate(pattern_id=pattern_id, target_api="torch.cumsum", score=0.31, status="vetoed",
                       rationale="functional similarity 0.31 (embeddings); check: cumsum has no NaN-gating branch")
    harnessed = Candidate(pattern_id=pattern_id, target_api="torch.sigmoid", score=0.55, status="harnessed",
                          rationale="semantic text similarity 0.55")
    session.add_all([checked, vetoed, harnessed])
    session.flush()
    session.add(Harness(candidate_id=harnessed.id, spec=spec("torch.sigmoid", "compile:inductor"), status="pending"))
    session.flush()
    return {"checked": checked.id, "vetoed": vetoed.id, "harnessed": harnessed.id}


def populate(session: Session) -> ReviewRows:
    rows = build_lineage(session)
    run_id = start_run(session, "fuzz", {"budget_s": 60})
    finish_run(session, run_id, "completed", {"executions": 1200, "tasks": 3})
    hostile = add_hostile_lineage(session)
    ids = {
        "compile": add_finding(session, rows.harness_id),
        "compile_dup": add_finding(session, rows.harness_id, max_abs_diff=2.0),
        "passed": add_finding(session, rows.harness_id, verdict="passed", signature=""),
        "direct": add_finding(session, rows.direct_harness_id, verdict="suspicious", signature="", max_abs_diff="inf"),
        "hostile": add_finding(session, hostile, signature="torch.tanh|x", repro=HOSTILE_REPRO),
    }
    from db.models import Finding

    for finding_id in (ids["compile"], ids["passed"]):
        session.get(Finding, finding_id).run_id = run_id  # type: ignore[union-attr]
    session.flush()
    return ReviewRows(ids=ids, run_id=run_id, candidates=add_open_candidates(session, rows.pattern_id))
