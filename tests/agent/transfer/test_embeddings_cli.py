"""`transfuzz transfer --matcher …` through the CLI: the summary names the matcher that ran."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from agent.cli.app import app
from db.queries import transfer as transfer_queries
from db.store import open_store
from tests.agent.llm.fake_openai_server import ScriptedServer
from tests.db.fixtures import add_issue_with_pattern

runner = CliRunner()
ACTIVATION = [{"name": "input", "role": "input", "kind": "tensor"}, {"name": "inplace", "role": "inplace", "kind": "bool"}]
INVENTORY = [
    {"api": "torch.nn.functional.relu6", "summary": "ReLU6 element-wise, min(max(0,x),6)"},
    {"api": "torch.nn.functional.hardtanh", "summary": "HardTanh element-wise clamp"},
    {"api": "torch.nn.functional.relu", "summary": "rectified linear unit element-wise"},
]


@pytest.fixture
def seeded_db(tmp_path, monkeypatch: pytest.MonkeyPatch) -> str:  # type: ignore[no-untyped-def]
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TRANSFUZZ_LLM", "TRANSFUZZ_EMBEDDING_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TRANSFUZZ_LLM", "offline")
    url = f"sqlite:///{tmp_path / 'transfuzz.db'}"
    store = open_store(url)
    try:
        add_issue_with_pattern(store)
        rows = [{**row, "category": "activation", "parameters": ACTIVATION, "dtypes": ["float32"], "details": {},
                 "torch_version": torch.__version__} for row in INVENTORY]
        with store.session() as session:
            transfer_queries.upsert_semantics_rows(session, rows)
            transfer_queries.record_inventory_snapshot(session, torch.__version__, len(rows), "offline")
    finally:
        store.close()
    return url


def test_embeddings_matcher_is_named_in_the_json_summary(seeded_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedServer([]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("TRANSFUZZ_EMBEDDING_MODEL", "bow-test")
        result = runner.invoke(app, ["--db", seeded_db, "--json", "transfer", "--matcher", "embeddings"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["matcher"] == "embeddings:bow-test" and data["inventory_embedded"] == 3
    assert data["candidates"] == 2 and len(server.embedding_requests) == 1
    assert data["vector_storage"] == "json"  # SQLite: plain vectors


def test_text_summary_says_tfidf_when_nothing_is_configured(seeded_db: str) -> None:
    result = runner.invoke(app, ["--db", seeded_db, "transfer"])
    assert result.exit_code == 0, result.stderr
    assert "matcher: tfidf (0 inventory APIs embedded)" in result.stdout


def test_embeddings_without_a_model_is_a_usage_error(seeded_db: str) -> None:
    result = runner.invoke(app, ["--db", seeded_db, "transfer", "--matcher", "embeddings"])
    assert result.exit_code == 2
    assert "TRANSFUZZ_EMBEDDING_MODEL" in result.stderr
