"""The checks rows show what fuzz_core recorded when the checks ran, never what the verdict suggests."""

from __future__ import annotations

from typing import Any

from agent.review.checks import NOT_RECORDED, CheckRow, check_lines, check_name, recorded_checks
from fuzz_core import HarnessSpec, run_harness
from fuzz_core.evidence import CheckOutcome, Evidence
from tests.fuzz_core.test_recorded_checks import LAYOUT_OFFSET, LAYOUT_SHAPE


def _evidence(tmp_path, code: str) -> dict[str, Any]:
    spec = HarnessSpec(api="planted.layout", input_source="code", code=code, test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path, instrument="none")
    assert result.verdict == "confirmed", result.reason
    return result.evidence


def test_rows_are_the_recorded_checks_in_the_order_they_ran(tmp_path) -> None:
    evidence = _evidence(tmp_path, LAYOUT_OFFSET)
    rows = recorded_checks("confirmed", evidence)
    assert [(r.name, r.status) for r in rows] == [(check_name(c["check"]), c["status"]) for c in evidence["checks"]]


def test_a_shape_finding_shows_no_value_check(tmp_path) -> None:
    rows = recorded_checks("confirmed", _evidence(tmp_path, LAYOUT_SHAPE))
    assert [r.name for r in rows] == ["reference accepts input", "shape differs", "reproducible"]


def test_a_deciding_check_names_the_verdict_it_chose() -> None:
    evidence = Evidence()
    evidence.update({"checks": [CheckOutcome("check_reproducible", "decided", "the difference did not reproduce on "
                                             "re-run", {"verdict": "flaky"})]})
    (row,) = recorded_checks("flaky", evidence.to_dict())
    assert row == CheckRow("reproducible", "decided", "verdict flaky: the difference did not reproduce on re-run")


def test_a_finding_stored_without_records_says_so_instead_of_passing_checks() -> None:
    assert recorded_checks("confirmed", {"max_abs_diff": 1.0}) == [CheckRow("checks", "not recorded", NOT_RECORDED)]


def test_a_verdict_without_a_difference_shows_no_check() -> None:
    (row,) = recorded_checks("inconclusive", {})
    assert row.status == "none"


def test_check_lines_keep_hostile_details_on_one_line() -> None:
    evidence = {"checks": [{"check": "check_fp64", "status": "held", "detail": "a\n## forged\x1b[2J", "figures": {}}]}
    (line,) = check_lines("confirmed", evidence)
    assert "\n" not in line and "\x1b" not in line and line.startswith("  fp64  held: a ## forged")
