"""`transfuzz eval extraction --issues DUMP --labels FILE`: tables, --json and its schema, splits, usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from agent.cli.app import app
from tests.agent.eval.issue_dump import LABELS, write_dump, write_labels

runner = CliRunner()


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TRANSFUZZ_LLM"):
        monkeypatch.delenv(var, raising=False)
    return write_dump(tmp_path), write_labels(tmp_path)


def _run(files: tuple[Path, Path], *args: str, json_out: bool = False):  # type: ignore[no-untyped-def]
    dump, labels = files
    return runner.invoke(app, [*(["--json"] if json_out else []), "eval", "extraction", "--issues", str(dump),
                               "--labels", str(labels), *args])


def test_offline_extractor_scores_recall_kind_and_api_on_all_issues(files) -> None:  # type: ignore[no-untyped-def]
    result = _run(files, "--split", "all", json_out=True)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["reports"] == 4 and data["targets"] == 2
    # the bfloat16 cumsum report becomes a pattern (torch.cumsum matches the label's torch.Tensor.cumsum);
    # the vague one does not
    assert data["silent_bug_recall"] == {"hits": 1, "total": 2, "rate": 0.5}
    assert (data["kind"]["hits"], data["api"]["hits"], data["modes"]["hits"]) == (1, 1, 1)


def test_json_follows_the_published_schema(files) -> None:  # type: ignore[no-untyped-def]
    result = _run(files, "--split", "all", json_out=True)
    published = runner.invoke(app, ["schema", "eval-extraction-issues"])
    assert published.exit_code == 0, published.stderr
    document = json.loads(result.stdout)
    jsonschema.validate(document, json.loads(published.stdout))
    assert document["schema_version"] == 1 and document["split_rule"].startswith("eval when int(sha256")


def test_the_default_split_is_train(files) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(_run(files, json_out=True).stdout)
    assert data["split"] == "train" and data["reports"] == 2 and data["eval_issues_withheld"] == 0


def test_eval_issues_are_never_listed_as_misses(files) -> None:  # type: ignore[no-untyped-def]
    result = _run(files, "--split", "eval", "--misses")
    assert result.exit_code == 0, result.stderr
    assert "#1" not in result.stdout and "2 eval issues not listed" in result.stdout


def test_table_shows_the_triage_confusion_and_recall(files) -> None:  # type: ignore[no-untyped-def]
    result = _run(files, "--split", "all")
    assert result.exit_code == 0, result.stderr
    for text in ("silent_bug", "not_a_bug", "precision", "confusion", "unknown", "silent-bug recall", "1/2 = 0.50"):
        assert text in result.stdout


def test_a_malformed_label_line_exits_2_naming_the_line(tmp_path: Path, files) -> None:  # type: ignore[no-untyped-def]
    labels = write_labels(tmp_path, LABELS, extra_lines=['{"number": 7, "verdict": "bug"}'])
    result = runner.invoke(app, ["eval", "extraction", "--issues", str(files[0]), "--labels", str(labels)])
    assert result.exit_code == 2 and "labels.jsonl:5" in result.stderr


def test_a_label_without_an_issue_exits_2_naming_the_line(  # type: ignore[no-untyped-def]
        tmp_path: Path, files) -> None:
    labels = write_labels(tmp_path, [LABELS[0], {**LABELS[1], "number": 4242}])
    result = runner.invoke(app, ["eval", "extraction", "--issues", str(files[0]), "--labels", str(labels)])
    assert result.exit_code == 2 and "labels.jsonl:2: issue #4242 is not in the issue dump" in result.stderr


def test_a_dump_that_is_not_json_exits_2(tmp_path: Path, files) -> None:  # type: ignore[no-untyped-def]
    dump = tmp_path / "dump.json"
    dump.write_text("not a dump", encoding="utf-8")
    result = runner.invoke(app, ["eval", "extraction", "--issues", str(dump), "--labels", str(files[1])])
    assert result.exit_code == 2 and "dump.json" in result.stderr


def test_the_own_format_splits_are_refused_with_issues(files) -> None:  # type: ignore[no-untyped-def]
    result = _run(files, "--split", "heldout")
    assert result.exit_code == 2 and "train, eval or all" in result.stderr


def test_train_and_eval_are_refused_without_issues(files) -> None:  # type: ignore[no-untyped-def]
    result = runner.invoke(app, ["eval", "extraction", "--labels", str(files[1]), "--split", "train"])
    assert result.exit_code == 2 and "needs --issues" in result.stderr


def test_help_states_the_split_rule() -> None:
    result = runner.invoke(app, ["eval", "extraction", "--help"], env={"COLUMNS": "400"})
    assert "sha256" in result.stdout and "tuned only looking at train" in result.stdout


def test_record_runs_the_repros_in_the_sandbox_and_says_so(files) -> None:  # type: ignore[no-untyped-def]
    import shutil

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    result = _run(files, "--split", "train", "--record", json_out=True)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["extractor"] == "offline + recorded runs"
    # the recording of the bfloat16 cumsum repro names the op it ran: the pattern and its API stand
    assert data["silent_bug_recall"]["hits"] == 1 and data["api"]["hits"] == 1


def test_record_needs_real_issues(files) -> None:  # type: ignore[no-untyped-def]
    result = runner.invoke(app, ["eval", "extraction", "--labels", str(files[1]), "--record"])
    assert result.exit_code == 2 and "--record needs --issues" in " ".join(result.stderr.split())
