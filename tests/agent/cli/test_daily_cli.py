"""The command line for daily use, run as a user runs it: a real process with COLUMNS set and stdout piped,
or CliRunner where the point is the document printed rather than the terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from typer.testing import CliRunner

from agent.cli.app import app
from db.models import Finding, Harness, Run
from db.store import Store
from fuzz_core.inputs import Sample
from fuzz_core.saved_inputs import save_inputs
from tests.agent.review.rows import add_finding, build_lineage, spec

runner = CliRunner()

# Two long names that share their first 20 characters and their last 5 ("_norm"): cut from the right
# they read the same; cut from the left they must not.
LONG_APIS = ("torch.nn.functional.layer_norm", "torch.nn.functional.batch_norm", "torch.nn.functional.group_norm")


def _cli(*args: str, columns: int | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`transfuzz ARGS` in a fresh process with stdout piped (not a terminal)."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("TRANSFUZZ_DB_URL", "COLUMNS")}
    if columns is not None:
        full_env["COLUMNS"] = str(columns)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], capture_output=True, text=True, env=full_env,
                          timeout=120)


def _direct_finding(session: Any, api: str, verdict: str = "suspicious", **evidence: Any) -> int:
    harness = Harness(candidate_id=None, spec=spec(api, "dtype:float16", "Precision_Mismatch"), status="done")
    session.add(harness)
    session.flush()
    return add_finding(session, harness.id, verdict=verdict, signature="", **evidence)


@pytest.fixture
def review_db(tmp_path: Path) -> Store:
    """A SQLite file holding confirmed, suspicious and passed findings, long API names among them."""
    from db.store import open_store

    store = open_store(f"sqlite:///{tmp_path / 'review.db'}")
    with store.session() as session:
        rows = build_lineage(session)
        add_finding(session, rows.harness_id)  # confirmed torch.relu
        add_finding(session, rows.harness_id, verdict="passed", signature="")
        for api in LONG_APIS:
            _direct_finding(session, api)
    yield store
    store.close()


def _table_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("columns", [80, 60])
def test_review_list_fits_the_width_given_by_COLUMNS_when_piped(review_db: Store, columns: int) -> None:
    result = _cli("--db", review_db.url, "review", "list", columns=columns)
    assert result.returncode == 0, result.stderr
    assert max(len(line) for line in _table_lines(result.stdout)) <= columns, result.stdout


def test_review_list_piped_without_COLUMNS_is_80_wide(review_db: Store) -> None:
    result = _cli("--db", review_db.url, "review", "list", "--all")
    assert result.returncode == 0, result.stderr
    assert max(len(line) for line in _table_lines(result.stdout)) <= 80, result.stdout


def test_review_list_shortens_api_names_from_the_left_and_keeps_them_distinct(review_db: Store) -> None:
    result = _cli("--db", review_db.url, "review", "list", columns=60)
    rows = [line.split() for line in _table_lines(result.stdout)]
    shown = [cells[2] for cells in rows if len(cells) > 2 and cells[1] in ("confirmed", "suspicious")
             and cells[2] != "torch.relu"]
    assert len(shown) == len(LONG_APIS)
    assert len(set(shown)) == len(shown), shown
    for text, api in zip(shown, LONG_APIS):
        assert api.endswith(text.removeprefix("…")), (text, api)


def test_short_names_never_make_two_names_the_same_string() -> None:
    from agent.cli.terminal import short_names

    names = ["torch.nn.functional.layer_norm", "torch.layer_norm", "torch.nn.functional.batch_norm"]
    shown = short_names(names, 12)
    assert len(set(shown)) == len(names), shown
    assert all(name.endswith(text.removeprefix("…")) for name, text in zip(names, shown))
    assert short_names(["torch.relu"], 12) == ["torch.relu"]


def test_review_list_defaults_to_unreviewed_confirmed_and_suspicious(review_db: Store) -> None:
    document = json.loads(runner.invoke(app, ["--db", review_db.url, "review", "list", "--json"]).stdout)
    assert {row["verdict"] for row in document["findings"]} == {"confirmed", "suspicious"}
    assert document["filters"]["verdict"] == ["confirmed", "suspicious"]
    every = json.loads(runner.invoke(app, ["--db", review_db.url, "review", "list", "--all", "--json"]).stdout)
    assert "passed" in {row["verdict"] for row in every["findings"]}


def test_global_options_work_after_the_subcommand_in_a_real_process(review_db: Store) -> None:
    result = _cli("review", "list", "--json", "--db", review_db.url)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["schema_version"] == 1


def test_review_list_shows_the_review_note(review_db: Store) -> None:
    with review_db.session() as session:
        suspicious = session.query(Finding).filter(Finding.verdict == "suspicious").first().id
    accepted = runner.invoke(app, ["--db", review_db.url, "review", "accept", str(suspicious), "--force",
                                   "--note", "overflow seen by hand"])
    assert accepted.exit_code == 0, accepted.stderr
    result = runner.invoke(app, ["--db", review_db.url, "review", "list", "--all"], env={"COLUMNS": "160"})
    assert "overflow seen by hand" in result.stdout


def test_accepting_a_finding_that_is_not_confirmed_needs_force(review_db: Store) -> None:
    with review_db.session() as session:
        suspicious = session.query(Finding).filter(Finding.verdict == "suspicious").first().id
    refused = runner.invoke(app, ["--db", review_db.url, "review", "accept", str(suspicious)])
    assert refused.exit_code == 2
    assert "not confirmed" in refused.stderr and "--force" in refused.stderr
    with review_db.session() as session:
        assert session.get(Finding, suspicious).review_status == "unreviewed"


def _saved(tmp_path: Path, name: str, *args: Any) -> str:
    path = tmp_path / f"{name}.safetensors"
    save_inputs(Sample(tuple(args), {}, None, "test"), str(path))
    return str(path)


def test_review_show_prints_the_input_and_both_modes_next_to_float64(review_db: Store, tmp_path: Path) -> None:
    minimised = _saved(tmp_path, "minimised", torch.tensor([1.0], dtype=torch.float32), 1e-06)
    figures = {"output": "out", "reference_mode": "eager", "test_mode": "dtype:float16", "output_dtype": "float16",
               "reference_values": [13.80231761932373], "test_values": ["inf"], "float64_values": [13.815509557935018],
               "reference_error_vs_fp64": 0.013191938611287313, "test_error_vs_fp64": "inf"}
    with review_db.session() as session:
        # logit(1, eps=1e-6) is inf in float16 because 1 - 1e-6 rounds to 1 there: the engine calls that
        # suspicious, not confirmed (docs/verdicts.md); review show prints its values all the same.
        finding = _direct_finding(session, "torch.logit", verdict="suspicious",
                                  minimised={"inputs_path": minimised, "figures": figures})
    result = _cli("--db", review_db.url, "review", "show", str(finding), columns=80)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "arg0: float32[1] = [1]" in out and "arg1: 1e-06" in out
    assert "eager          [13.8023]" in out and "dtype:float16  [inf]" in out and "float64        [13.8155]" in out
    assert "largest distance from float64: eager 0.0131919, dtype:float16 inf" in out


def test_review_show_summarises_a_large_input(review_db: Store, tmp_path: Path) -> None:
    big = torch.arange(1000, dtype=torch.float32).reshape(10, 100)
    big[0, 1] = float("nan")
    inputs = _saved(tmp_path, "inputs", big)
    with review_db.session() as session:
        finding = _direct_finding(session, "torch.exp", inputs_path=inputs)
    out = runner.invoke(app, ["--db", review_db.url, "review", "show", str(finding)]).stdout
    assert "arg0: float32[10, 100] (1000 elements) min 0, max 999, 1 nan, 0 inf; first 8: [0, nan, 2," in out
    assert "outputs not stored for this finding" in out and "--replay" in out


def test_read_commands_never_create_a_database(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "r.db"
    for command in (["review", "list"], ["stats"], ["review", "show", "1"], ["export", "--out", str(tmp_path / "o")]):
        result = runner.invoke(app, ["--db", f"sqlite:///{missing}", *command])
        assert result.exit_code == 2, (command, result.stderr)
        assert f"no database at {missing}" in " ".join(result.stderr.split())
    assert not missing.parent.exists()


def test_an_invalid_url_names_the_expected_forms() -> None:
    result = runner.invoke(app, ["--db", "not a url", "stats"])
    assert result.exit_code == 2
    assert "sqlite:////absolute/path.db" in result.stderr and "postgresql+psycopg://" in result.stderr


def test_a_file_that_is_not_json_is_exit_2_naming_the_position(tmp_path: Path) -> None:
    dump = tmp_path / "issues.json"
    dump.write_text('[{"number": 1, "title": "x",\n  "body": oops}]\n')
    result = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 'x.db'}", "ingest", "file", str(dump)])
    assert result.exit_code == 2
    assert "is not JSON" in result.stderr and "line" in result.stderr


def test_export_explains_a_folder_it_cannot_write(review_db: Store, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = runner.invoke(app, ["--db", review_db.url, "export", "--out", str(blocker / "reports")])
    assert result.exit_code == 2
    assert f"{blocker} is not a directory (it is a file)" in " ".join(result.stderr.split())


def test_run_refuses_github_filters_for_a_dump_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 'x.db'}", "run", "examples/sample_issues.json",
                                 "--label", "module: correctness (silent)"])
    assert result.exit_code == 2
    assert "--label filters GitHub issues only" in result.stderr


def test_enumerated_options_list_their_choices_in_help() -> None:
    wide = {"COLUMNS": "200"}
    assert "open|closed|all" in runner.invoke(app, ["ingest", "github", "--help"], env=wide).stdout
    assert "full|half|mixed" in runner.invoke(app, ["fuzz", "--help"], env=wide).stdout
    review = runner.invoke(app, ["review", "list", "--help"], env=wide).stdout
    assert "unreviewed|accepted|rejected" in review and "not_applicable" in review
    assert "Gradient_Mismatch" in " ".join(runner.invoke(app, ["fuzz", "api", "--help"], env=wide).stdout.split())
    run_help = runner.invoke(app, ["run", "--help"], env=wide).stdout
    assert all(option in run_help for option in ("--label", "--since", "--state", "--comments", "--llm"))


def test_choice_lists_match_the_vocabularies_they_come_from() -> None:
    from typing import get_args

    from agent.cli.fuzz import Precision
    from agent.cli.ingest_cmd import IssueState
    from agent.harness.generate import PRECISIONS
    from agent.ingest.github_sync import STATES

    assert set(get_args(Precision)) == set(PRECISIONS)
    assert set(get_args(IssueState)) == set(STATES)


def test_ingest_github_help_explains_token_rate_limits_and_a_first_command() -> None:
    text = " ".join(runner.invoke(app, ["ingest", "github", "--help"], env={"COLUMNS": "200"}).stdout.split())
    assert "GITHUB_TOKEN" in text and "60 requests an hour" in text and "5,000" in text
    assert 'transfuzz ingest github pytorch/pytorch --label "module: correctness (silent)" --since' in text


def test_schema_command_publishes_every_versioned_document() -> None:
    listing = runner.invoke(app, ["schema"]).stdout
    for name in ("run", "review-list", "review-show", "stats", "stats-run"):
        assert name in listing
        document = json.loads(runner.invoke(app, ["schema", name]).stdout)
        assert document["properties"]["schema_version"]["default"] == 1
    assert runner.invoke(app, ["schema", "nope"]).exit_code == 2


def test_json_output_validates_against_its_published_schema(review_db: Store) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    with review_db.session() as session:
        _direct_finding(session, "torch.exp", max_abs_diff=float("inf"))
    document = json.loads(runner.invoke(app, ["--db", review_db.url, "--json", "review", "list"]).stdout)
    jsonschema.validate(document, json.loads(runner.invoke(app, ["schema", "review-list"]).stdout))
    assert "inf" in [row["max_abs_diff"] for row in document["findings"]]  # one spelling, never Infinity


def _two_runs(store: Store) -> tuple[int, int]:
    with store.session() as session:
        harness_id = build_lineage(session).harness_id
        first, second = Run(command="fuzz"), Run(command="fuzz")
        session.add_all([first, second])
        session.flush()
        for run_id, verdicts in ((first.id, ["passed"] * 3), (second.id, ["confirmed", "not_applicable",
                                                                          "not_applicable", "inconclusive"])):
            for verdict in verdicts:
                finding = session.get(Finding, add_finding(session, harness_id, verdict=verdict, signature=""))
                finding.run_id = run_id
                if verdict == "not_applicable":
                    finding.reason = "CUDA is not available on this machine [detail]"
        return first.id, second.id


def test_run_summary_counts_this_run_only_and_stats_run_agrees(store: Store) -> None:
    from agent.cli.run_summary import build_run_summary

    review_db = store  # SQLite and PostgreSQL
    _, second = _two_runs(review_db)
    stages = {"fuzz": {"run_id": second, "exit_reason": "budget", "harnesses": 4, "left_pending": 2}}
    summary = build_run_summary(review_db, stages, elapsed_s=12.3, db_option=f" --db {review_db.url}")
    assert summary.verdicts == {"confirmed": 1, "inconclusive": 1, "not_applicable": 2}
    assert summary.inconclusive == 1
    assert [(r.reason, r.count) for r in summary.not_applicable] == [("CUDA is not available on this machine", 2)]
    assert any(step.startswith(f"transfuzz --db {review_db.url} review list") for step in summary.next_steps)
    assert any(" export " in step for step in summary.next_steps)
    stats = json.loads(runner.invoke(app, ["--db", review_db.url, "--json", "stats", "--run", str(second)]).stdout)
    assert stats["verdicts"] == summary.verdicts
    assert stats["counters"]["pipeline"]["harnesses_fuzzed"] == 4


def test_stats_for_an_unknown_run_names_the_last_one(store: Store) -> None:
    _, second = _two_runs(store)
    result = runner.invoke(app, ["--db", store.url, "stats", "--run", "999"])
    assert result.exit_code == 2 and f"the last run is {second}" in result.stderr


def test_a_usage_error_is_one_line_naming_the_help_to_read(tmp_path: Path) -> None:
    result = _cli("--db", f"sqlite:///{tmp_path / 'x.db'}", "review", "list", "--bogus")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: No such option: --bogus (see `transfuzz review list --help`)"]
