"""`transfuzz eval extraction` on a small labels file: table, --json, splits, usage errors, a model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.app import app

runner = CliRunner()

BF16_REPRO = "```python\nimport torch\nx = torch.ones(4096, dtype=torch.bfloat16)\nprint(torch.cumsum(x, 0)[-1])\n```"
RECORDS = [
    {"id": "a", "split": "dev", "category": "precision", "title": "cumsum in bfloat16 returns the wrong total",
     "body": "The last element should be 4096." + "\n" + BF16_REPRO, "tracker_labels": ["module: correctness (silent)"],
     "labels": {"triage": "silent_bug", "kind": "Precision_Mismatch", "apis": ["torch.cumsum"],
                "modes": [["eager", "dtype:bfloat16"]]}},
    {"id": "b", "split": "heldout", "category": "docs", "title": "Typo in the [bold]cumsum[/bold] docs \x1b]52;c;QQ==\x07",
     "body": "### 📚 The doc issue\n\nA typo.", "labels": {"triage": "not_silent"}},
    {"id": "c", "split": "heldout", "category": "false_alarm", "title": "torch.log returns nan",
     "body": "```python\nimport torch\nx = torch.tensor([-1.0, 2.0])\nprint(torch.log(x), torch.isnan(torch.log(x)))\n```",
     "labels": {"triage": "not_a_bug", "false_alarm_class": "ieee_nan", "kind": "NaN_Inf", "apis": ["torch.log"]}},
    # labelled silent with no evidence in the text: a triage miss whose id is hostile terminal text
    {"id": "d[red]x[/red]\x1b]52;c;QQ==\x07", "split": "dev", "category": "vague_title", "title": "hmm",
     "body": "It happened again.", "labels": {"triage": "silent_bug", "kind": "NaN_Inf", "apis": ["torch.log"]}},
]


@pytest.fixture
def labels_file(tmp_path: Path) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    return path


@pytest.fixture
def offline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TRANSFUZZ_LLM"):
        monkeypatch.delenv(var, raising=False)


def test_json_scores_the_chosen_split(labels_file: Path, offline_env) -> None:  # type: ignore[no-untyped-def]
    result = runner.invoke(app, ["--json", "eval", "extraction", "--labels", str(labels_file), "--split", "heldout"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["extractor"] == "offline" and data["split"] == "heldout" and data["reports"] == 2
    by_class = {row["label"]: row for row in data["triage"]}
    assert by_class["not_a_bug"]["support"] == 1 and by_class["not_silent"]["support"] == 1
    assert by_class["silent_bug"]["support"] == 0
    assert sum(sum(row.values()) for row in data["confusion"].values()) == 2


def test_all_split_measures_the_pattern_of_the_silent_bug(labels_file: Path, offline_env) -> None:  # type: ignore[no-untyped-def]
    result = runner.invoke(app, ["--json", "eval", "extraction", "--labels", str(labels_file), "--split", "all"])
    data = json.loads(result.stdout)
    assert data["reports"] == 4 and data["kind"]["total"] == 2 and data["api"]["total"] == 2


def test_table_shows_classes_and_escapes_titles(labels_file: Path, offline_env) -> None:  # type: ignore[no-untyped-def]
    # --misses lists the ids of wrongly triaged reports: printed as text, markup and escape sequences inert
    result = runner.invoke(app, ["eval", "extraction", "--labels", str(labels_file), "--split", "all", "--misses"])
    assert result.exit_code == 0, result.stderr
    for text in ("silent_bug", "not_a_bug", "not_silent", "precision", "recall", "mode pair", "confusion"):
        assert text in result.stdout
    assert "d[red]x[/red]" in result.stdout and "\x1b]52" not in result.stdout


def test_a_bad_labels_file_exits_2_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(RECORDS[0]) + "\n" + '{"id": "x"}\n', encoding="utf-8")
    result = runner.invoke(app, ["eval", "extraction", "--labels", str(path)])
    assert result.exit_code == 2 and "bad.jsonl:2" in result.stderr


def test_missing_file_and_empty_split_exit_2(tmp_path: Path, labels_file: Path) -> None:
    assert runner.invoke(app, ["eval", "extraction", "--labels", str(tmp_path / "none.jsonl")]).exit_code == 2
    only_dev = tmp_path / "dev.jsonl"
    only_dev.write_text(json.dumps(RECORDS[0]) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["eval", "extraction", "--labels", str(only_dev), "--split", "heldout"])
    assert result.exit_code == 2 and "no records in split" in result.stderr


def test_openai_backend_is_scored_on_the_same_labels(labels_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.agent.extract.test_stage import PATTERN, TRIAGE
    from tests.agent.llm.fake_openai_server import Reply, ScriptedServer

    not_silent = json.dumps({"is_silent_bug": False, "has_repro": False, "false_alarm_class": None,
                             "confidence": 0.9, "reason": "docs"})
    with ScriptedServer([Reply(TRIAGE), Reply(PATTERN), Reply(not_silent), Reply(not_silent)]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "dummy")
        result = runner.invoke(app, ["--json", "eval", "extraction", "--labels", str(labels_file), "--split", "all",
                                     "--llm", "openai", "--model", "scripted-model"])
        asked = len(server.requests)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert asked >= 5
    assert data["extractor"] == "openai:scripted-model"
    assert (data["kind"]["hits"], data["api"]["hits"], data["modes"]["hits"]) == (1, 1, 1)
    by_class = {row["label"]: row for row in data["triage"]}
    # report a is found; report d got a 500 (replies ran out): an extractor error, and the run went on
    assert (by_class["silent_bug"]["true_positives"], by_class["silent_bug"]["support"]) == (1, 2)
    assert data["errors"] == 1 and data["reports"] == 4


def test_openai_without_endpoint_exits_2(labels_file: Path, offline_env) -> None:  # type: ignore[no-untyped-def]
    result = runner.invoke(app, ["eval", "extraction", "--labels", str(labels_file), "--llm", "openai"])
    assert result.exit_code == 2 and "OPENAI_BASE_URL" in result.stderr


# ---- eval transfer: a database holding real semantics of a few APIs, the sample issues' patterns ----

TRANSFER_APIS = {"torch.logit": "opinfo", "torch.log": "opinfo", "torch.log1p": "opinfo", "torch.sin": "opinfo",
                 "torch.bitwise_not": "opinfo", "torch.nn.GroupNorm": "module", "torch.nn.BatchNorm2d": "module",
                 "torch.nn.LayerNorm": "module", "torch.nn.Linear": "module"}
TRANSFER_GROUPS = [
    {"id": "logit-log-fp16", "source": "torch.logit", "kind": "Precision_Mismatch", "test_mode": "dtype:float16",
     "siblings": ["torch.log", "torch.log1p"], "evidence": "sweeps"},
    {"id": "groupnorm-x[red]y[/red]\x1b]52;c;QQ==\x07", "source": "torch.nn.GroupNorm", "kind": "Layout_Mismatch",
     "test_mode": "layout:channels_last", "siblings": ["torch.nn.BatchNorm2d", "torch.nn.LayerNorm"]},
]


@pytest.fixture
def transfer_db(tmp_path: Path, offline_env) -> str:  # type: ignore[no-untyped-def]
    import torch

    from agent.extract import semantics_for
    from agent.inventory.enumerate import ApiEntry
    from agent.inventory.refresh import semantics_row
    from db import models
    from db.queries import transfer as transfer_queries
    from db.store import open_store
    from tests.db.fixtures import add_issue_with_pattern

    url = f"sqlite:///{tmp_path / 'transfuzz.db'}"
    store = open_store(url)
    try:
        rows = [semantics_row(semantics_for(api), ApiEntry(api, kind, kind == "opinfo"), torch.__version__, "offline")
                for api, kind in TRANSFER_APIS.items()]
        with store.session() as session:
            transfer_queries.upsert_semantics_rows(session, rows)
            transfer_queries.record_inventory_snapshot(session, torch.__version__, len(rows), "offline")
        pattern_id = add_issue_with_pattern(store)
        with store.session() as session:  # torch.log fuzzed in float16 and confirmed
            candidate = models.Candidate(pattern_id=pattern_id, target_api="torch.log", status="proposed")
            session.add(candidate)
            session.flush()
            harness = models.Harness(candidate_id=candidate.id, spec={"api": "torch.log", "test_mode": "dtype:float16"})
            session.add(harness)
            session.flush()
            session.add(models.Finding(harness_id=harness.id, verdict="confirmed"))
    finally:
        store.close()
    return url


@pytest.fixture
def transfer_files(tmp_path: Path) -> tuple[Path, Path]:
    samples = json.loads((Path(__file__).resolve().parents[3] / "examples" / "sample_issues.json").read_text("utf-8"))
    issues = tmp_path / "issues.json"
    issues.write_text(json.dumps([i for i in samples if i["number"] in (108, 111)]), encoding="utf-8")
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"groups": TRANSFER_GROUPS}), encoding="utf-8")
    return groups, issues


def _transfer_args(db: str, files: tuple[Path, Path], *extra: str) -> list[str]:
    return ["--db", db, *extra, "eval", "transfer", "--groups", str(files[0]), "--issues", str(files[1])]


def test_eval_transfer_json_ranks_the_siblings(transfer_db: str, transfer_files) -> None:  # type: ignore[no-untyped-def]
    result = runner.invoke(app, _transfer_args(transfer_db, transfer_files, "--json") + ["--top-k", "2"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["matcher"] == "tfidf" and data["inventory_source"] == "database" and data["top_k"] == 2
    logit, group_norm = data["groups"]
    assert logit["pattern_from"] == "sample issue #108" and logit["trigger_params"] == {"eps": "1e-06"}
    # all but bitwise_not (no float16; modules list no dtypes): eps vetoes nothing
    assert logit["candidates"] == len(TRANSFER_APIS) - 2
    assert sorted(s["rank"] for s in logit["siblings"]) == [1, 2]
    assert all(s["random_rank"] == 4.0 and s["lift"] >= 2.0 for s in logit["siblings"])
    assert group_norm["pattern_from"] == "sample issue #111"
    assert all(s["rank"] is not None for s in group_norm["siblings"])  # num_groups/num_channels veto nothing
    assert data["pairs"] == 4 and data["ranked_pairs"] == 4
    log = next(s for s in logit["siblings"] if s["api"] == "torch.log")
    assert log["fuzzed"] and log["confirmed"] and logit["share_confirmed"] == 1.0


def test_eval_transfer_table_escapes_group_text(transfer_db: str, transfer_files) -> None:  # type: ignore[no-untyped-def]
    result = runner.invoke(app, _transfer_args(transfer_db, transfer_files), env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.stderr
    for text in ("logit-log-fp16", "torch.log1p", "random rank", "hit@5", "MRR", "share confirmed", "not fuzzed"):
        assert text in result.stdout
    assert "groupnorm-x[red]y[/red]" in result.stdout and "\x1b]52" not in result.stdout


def test_eval_transfer_bad_groups_file_exits_2(tmp_path: Path, transfer_db: str, transfer_files) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"groups": [{**TRANSFER_GROUPS[0], "source": "os.system"}]}), encoding="utf-8")
    result = runner.invoke(app, _transfer_args(transfer_db, (bad, transfer_files[1])))
    assert result.exit_code == 2 and "bad.json: groups.0.source" in result.stderr


def test_eval_transfer_embeddings_without_a_model_exits_2(transfer_db: str, transfer_files, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TRANSFUZZ_EMBEDDING_MODEL", raising=False)
    result = runner.invoke(app, _transfer_args(transfer_db, transfer_files) + ["--matcher", "embeddings"])
    assert result.exit_code == 2 and "TRANSFUZZ_EMBEDDING_MODEL" in result.stderr


def test_eval_transfer_ranks_by_the_endpoints_embeddings(transfer_db: str, transfer_files, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tests.agent.llm.fake_openai_server import ScriptedServer

    with ScriptedServer([]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("TRANSFUZZ_EMBEDDING_MODEL", "bow-test")
        result = runner.invoke(app, _transfer_args(transfer_db, transfer_files, "--json") + ["--matcher", "embeddings"])
        embedded = len(server.embedding_requests)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["matcher"] == "embeddings:bow-test" and embedded >= 1
    assert data["ranked_pairs"] == 4
