"""The review page's checks table comes from the checks fuzz_core recorded on the finding's input."""

from __future__ import annotations

from agent.review.checks import check_name
from agent.web.service import load_finding
from db.store import Store
from fuzz_core import HarnessSpec, run_harness
from tests.agent.review.rows import add_finding, build_lineage
from tests.fuzz_core.test_recorded_checks import LAYOUT_RAISES


def test_an_exception_finding_shows_only_the_checks_that_ran(store: Store, tmp_path) -> None:
    spec = HarnessSpec(api="planted.raises", input_source="code", code=LAYOUT_RAISES, test_mode="layout:noncontiguous",
                       oracle="exception")
    result = run_harness(spec, max_executions=1, workdir=tmp_path, instrument="none")
    assert result.verdict == "confirmed", result.reason
    with store.session() as session:
        finding_id = add_finding(session, build_lineage(session).harness_id, **result.evidence)
    checks = load_finding(store, finding_id).checks
    assert [(c.name, c.status) for c in checks] == [
        (check_name(c["check"]), c["status"]) for c in result.evidence["checks"]]
    assert [c.name for c in checks] == ["reference accepts input", "reproducible", "oracle is exception"]
