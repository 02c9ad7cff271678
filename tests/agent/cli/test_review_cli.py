"""`transfuzz review` through the real CLI on a real database."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.cli.app import app
from db.models import Finding, Review
from db.store import Store
from tests.agent.review.rows import HOSTILE_REASON, add_finding, build_hostile_lineage, build_lineage

runner = CliRunner()


@pytest.fixture
def populated(store: Store) -> dict[str, int]:
    with store.session() as session:
        rows = build_lineage(session)
        return {
            "compile": add_finding(session, rows.harness_id),
            "passed": add_finding(session, rows.harness_id, verdict="passed", signature=""),
            "direct": add_finding(session, rows.direct_harness_id, verdict="suspicious", signature="", max_abs_diff="inf"),
        }


def _invoke(store: Store, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["--db", store.url, *args], env=env)


def test_list_json_with_filters(store: Store, populated: dict[str, int]) -> None:
    result = _invoke(store, "--json", "review", "list", "--all")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema_version"] == 1
    rows = document["findings"]
    assert [r["id"] for r in rows] == sorted(populated.values())
    first = rows[0]
    assert first["target_api"] == "torch.relu"
    assert (first["reference_mode"], first["test_mode"]) == ("eager", "compile:inductor")
    assert first["source_issue"] == "pytorch/pytorch#123456"
    assert first["max_abs_diff"] == 1.0

    only = json.loads(_invoke(store, "--json", "review", "list", "--verdict", "confirmed").stdout)["findings"]
    assert [r["id"] for r in only] == [populated["compile"]]
    two = json.loads(_invoke(store, "--json", "review", "list", "--verdict", "passed", "--verdict", "suspicious").stdout)
    two = two["findings"]
    assert [r["id"] for r in two] == [populated["passed"], populated["direct"]]
    assert two[1]["max_abs_diff"] == "inf"  # as fuzz_core stores a non-finite difference


def test_list_table(store: Store, populated: dict[str, int]) -> None:
    result = _invoke(store, "review", "list", "--status", "unreviewed", env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.stderr
    assert "torch.relu" in result.stdout and "torch.sigmoid" in result.stdout
    assert "eager vs compile:inductor" in result.stdout
    assert " inf " in result.stdout


def test_bad_filter_is_a_usage_error(store: Store, populated: dict[str, int]) -> None:
    result = _invoke(store, "review", "list", "--status", "done")
    assert result.exit_code == 2
    assert "'done' is not one of" in result.stderr
    assert all(f"'{status}'" in result.stderr for status in ("unreviewed", "accepted", "rejected"))


def test_show_has_source_pattern_evidence_and_repro(store: Store, populated: dict[str, int]) -> None:
    result = _invoke(store, "review", "show", str(populated["compile"]))
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "pytorch/pytorch#123456" in out and "https://github.com/pytorch/pytorch/issues/123456" in out
    assert "Compile_Eager_Mismatch ::= APICall(torch.nn.functional.gelu)[mode=eager] → v1" in out
    assert "target API:  torch.relu" in out
    assert "Verdict: confirmed" in out
    assert "max_abs_diff: 1" in out and '"inductor": "mismatch"' in out
    assert "observed = torch.relu(x)" in out


def test_show_prints_the_recorded_checks(store: Store, tmp_path) -> None:
    from fuzz_core import HarnessSpec, run_harness
    from tests.fuzz_core.test_recorded_checks import LAYOUT_SHAPE

    spec = HarnessSpec(api="planted.shape", input_source="code", code=LAYOUT_SHAPE, test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path, instrument="none")
    with store.session() as session:
        finding_id = add_finding(session, build_lineage(session).harness_id, **result.evidence)
    out = _invoke(store, "review", "show", str(finding_id)).stdout
    checks = out.split("Checks (as recorded when they ran):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split()[:2] for line in checks] == [["reference", "accepts"], ["shape", "differs"],
                                                     ["reproducible", "held:"]]
    assert "fp64" not in "\n".join(checks)  # a shape finding never reached the value checks


def test_show_of_a_finding_stored_without_checks_says_so(store: Store, populated: dict[str, int]) -> None:
    out = _invoke(store, "review", "show", str(populated["compile"])).stdout
    assert "checks not recorded (stored by an older version)" in out
    assert "held" not in out


def test_show_of_a_minimised_finding_shows_one_input(store: Store, tmp_path) -> None:
    from fuzz_core import HarnessSpec, run_harness
    from fuzz_core.minimise_finding import minimise_result
    from tests.fuzz_core.test_one_input_per_finding import THRESHOLD

    spec = HarnessSpec(api="planted.threshold", input_source="code", code=THRESHOLD, test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path, instrument="none")
    result = minimise_result(spec, result, tmp_path, budget_s=30)
    with store.session() as session:
        finding_id = add_finding(session, build_lineage(session).harness_id, **result.evidence)
        session.get(Finding, finding_id).reason = result.reason  # type: ignore[union-attr]
    out = _invoke(store, "review", "show", str(finding_id)).stdout
    elements = len(result.evidence["minimised"]["figures"]["test_values"])
    assert f"of {elements} elements differ" in out and "of 48 elements differ" not in out
    assert "input (the minimised input" in out
    assert f"mismatch_count: {result.evidence['mismatch_count']}" in out


def test_show_a_direct_harness_finding(store: Store, populated: dict[str, int]) -> None:
    result = _invoke(store, "--json", "review", "show", str(populated["direct"]))
    assert result.exit_code == 0, result.stderr
    detail = json.loads(result.stdout)
    assert detail["source"] is None and detail["pattern"] is None and detail["candidate"] is None
    assert detail["target_api"] == "torch.sigmoid" and detail["test_mode"] == "jit.trace"
    text = _invoke(store, "review", "show", str(populated["direct"])).stdout
    assert "none (harness made directly" in text


@pytest.mark.parametrize("command", ["show", "accept"])
def test_unknown_id_exits_2_with_a_clear_message(store: Store, populated: dict[str, int], command: str) -> None:
    result = _invoke(store, "review", command, "4242")
    assert result.exit_code == 2
    assert "no finding with id 4242" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("given", "message"), [("abc", "must be a number, got 'abc'"), ("0", "must be positive")])
def test_malformed_id_exits_2_with_one_line(store: Store, given: str, message: str) -> None:
    result = _invoke(store, "review", "show", given)
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_accept_then_reject_records_reviewer_time_and_history(store: Store, populated: dict[str, int]) -> None:
    fid = str(populated["compile"])
    accepted = _invoke(store, "--json", "review", "accept", fid, "--note", "looks real", env={"USER": "carol"})
    assert accepted.exit_code == 0, accepted.stderr
    stored = json.loads(accepted.stdout)
    assert (stored["decision"], stored["reviewer"], stored["note"]) == ("accepted", "carol", "looks real")
    assert stored["created_at"]

    rejected = _invoke(store, "review", "reject", fid, "--note", "within fp64 error", "--reviewer", "dave")
    assert rejected.exit_code == 0, rejected.stderr

    detail = json.loads(_invoke(store, "--json", "review", "show", fid).stdout)
    assert detail["review_status"] == "rejected"
    assert [(r["decision"], r["reviewer"]) for r in detail["reviews"]] == [("accepted", "carol"), ("rejected", "dave")]
    listed = json.loads(_invoke(store, "--json", "review", "list", "--status", "rejected").stdout)["findings"]
    assert [r["id"] for r in listed] == [populated["compile"]]


def test_reject_without_note_stores_nothing(store: Store, populated: dict[str, int]) -> None:
    for args in (["review", "reject", str(populated["compile"])], ["review", "reject", str(populated["compile"]), "--note", "  "]):
        result = _invoke(store, *args)
        assert result.exit_code == 2
        assert "a rejection needs a note" in result.stderr
    with store.session() as session:
        assert session.query(Review).count() == 0


@pytest.fixture
def hostile(store: Store) -> dict[str, int]:
    with store.session() as session:
        rows = build_hostile_lineage(session)
        return {
            "compile": add_finding(session, rows.harness_id),
            "direct": add_finding(session, rows.direct_harness_id, verdict="suspicious", signature=""),
        }


def test_show_prints_no_terminal_escape_sequences(store: Store, hostile: dict[str, int]) -> None:
    with store.session() as session:
        session.get(Finding, hostile["compile"]).reason = HOSTILE_REASON
    result = _invoke(store, "review", "show", str(hostile["compile"]))
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert not any(ch in out for ch in "\x1b\x07\x9b\r"), repr(out)
    # The title is one line: its "## Maintainer note" and "curl x | sh" do not start lines of their own.
    title_line = next(line for line in out.splitlines() if "pytorch/pytorch#123456:" in line)
    assert "## Maintainer note" in title_line and "curl x | sh" in title_line
    assert not any(line.startswith(("## ", "curl", "@")) for line in out.splitlines())
    # The stored html_url is issue-author data; the link shown is built from repo and number.
    assert "javascript:alert(document.cookie)" not in out
    assert "  https://github.com/pytorch/pytorch/issues/123456" in out.splitlines()


def test_list_prints_markup_in_data_literally(store: Store, hostile: dict[str, int]) -> None:
    result = _invoke(store, "review", "list", env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.stderr
    assert "torch.sigmoid[/x] [bold]y" in result.stdout


def test_error_messages_quote_markup_literally(store: Store) -> None:
    result = _invoke(store, "review", "show", "[/x]")
    assert result.exit_code == 2
    assert "got '[/x]'" in result.stderr


def test_list_shows_the_root_cause_group_within_80_columns(store: Store, populated: dict[str, int]) -> None:
    with store.session() as session:
        again = add_finding(session, session.get(Finding, populated["compile"]).harness_id)
    first = populated["compile"]
    table = _invoke(store, "review", "list", "--all", env={"COLUMNS": "80"})
    assert table.exit_code == 0, table.stderr
    lines = [line for line in table.stdout.splitlines() if line.strip()]
    assert max(len(line) for line in lines) <= 80, table.stdout
    assert "group" in lines[1].split()
    rows = {line.split()[0]: line.split() for line in lines if line.split()[0].isdigit()}
    assert f"g{first}" in rows[str(first)] and f"g{first}" in rows[str(again)]
    assert f"g{populated['direct']}" in rows[str(populated["direct"])]
    legend = " ".join(table.stdout[table.stdout.index("root causes shared"):].split())
    assert f"g{first}: value mismatch, eager vs compile:inductor; op family relu" in legend
    assert f"findings {first}, {again} (torch.relu)" in legend and f"g{populated['direct']}:" not in legend
    # Labels come from every finding, so a filtered listing names the same groups.
    confirmed = json.loads(_invoke(store, "--json", "review", "list", "--verdict", "confirmed").stdout)["findings"]
    assert [(r["id"], r["root_cause_id"]) for r in confirmed] == [(first, f"g{first}"), (again, f"g{first}")]
    assert "op family relu" in confirmed[0]["root_cause"]
