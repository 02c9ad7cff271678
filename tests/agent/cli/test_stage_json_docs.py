"""Every pipeline command's `--json` validates against the schema `transfuzz schema NAME` publishes."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from typer.testing import CliRunner

from agent.cli.app import app
from db.store import Store
from tests.agent.cli.test_eval_cli import labels_file, offline_env, transfer_db, transfer_files  # noqa: F401
from tests.agent.cli.test_export_cli import populated  # noqa: F401 (fixture)

runner = CliRunner()
SAMPLES = Path(__file__).resolve().parents[3] / "examples" / "sample_issues.json"


def _validated(name: str, args: list[str]) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stdout + result.stderr
    document = json.loads(result.stdout)
    published = runner.invoke(app, ["schema", name])
    assert published.exit_code == 0, published.stderr
    jsonschema.validate(document, json.loads(published.stdout))
    assert document["schema_version"] == 1
    return document


def test_ingest_file_json_follows_its_schema(tmp_path: Path) -> None:
    data = _validated("ingest", ["--db", f"sqlite:///{tmp_path / 'r.db'}", "--json", "ingest", "file", str(SAMPLES)])
    assert data["issues"] == data["new"] > 0


def test_extract_json_follows_its_schema(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    runner.invoke(app, ["--db", db, "ingest", "file", str(SAMPLES)])
    data = _validated("extract", ["--db", db, "--json", "extract", "--llm", "offline"])
    assert data["extractor"] == "offline" and data["tokens"] == 0


def test_fuzz_api_json_follows_its_schema(tmp_path: Path) -> None:
    data = _validated("fuzz-api", ["--json", "fuzz", "api", "torch.nn.functional.relu6", "--pattern",
                                   "layout_mismatch", "--budget", "5x", "--seed", "2", "--out", str(tmp_path)])
    assert data["max_abs_diff"] is None


def test_export_json_follows_its_schema(store: Store, populated, tmp_path: Path) -> None:  # noqa: F811
    data = _validated("export", ["--db", store.url, "--json", "export", "--format", "json",
                                 "--out", str(tmp_path / "out")])
    assert data["out"] == str(tmp_path / "out")


def test_eval_extraction_json_follows_its_schema(labels_file: Path) -> None:  # noqa: F811
    data = _validated("eval-extraction", ["--json", "eval", "extraction", "--labels", str(labels_file),
                                          "--split", "all"])
    assert data["extractor"] == "offline"


def test_eval_transfer_json_follows_its_schema(transfer_db: str, transfer_files) -> None:  # noqa: F811
    data = _validated("eval-transfer", ["--db", transfer_db, "--json", "eval", "transfer", "--groups",
                                        str(transfer_files[0]), "--issues", str(transfer_files[1])])
    assert data["groups_file"] == str(transfer_files[0])
