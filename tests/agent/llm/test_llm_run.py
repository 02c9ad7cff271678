"""`transfuzz run` / `extract` with the openai backend on a SQLite file, against a loopback server.

Each scripted fault ends as the LLM path promises: a summary and rc 0 when the answers are
usable (after repair), rc 1 with one line naming the URL when the endpoint is down, rc 2 for a
broken setup; and nothing stored earlier is lost.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from agent.cli.app import app
from db import models
from db.store import open_store
from tests.agent.llm.fake_openai_server import (
    MALFORMED,
    Reply,
    ScriptedServer,
    fenced,
    prose_then_fenced,
    refused_url,
    schema_name,
)

runner = CliRunner()
BODY = ("```python\nimport torch\nimport torch.nn.functional as F\nx = torch.tensor([float('nan'), 1.0])\n"
        "f = torch.jit.trace(lambda t: F.relu6(t), x)\nprint(f(x), F.relu6(x))  # traced gives 0 for NaN\n```")
TRIAGE = {"is_silent_bug": True, "has_repro": True, "false_alarm_class": None, "confidence": 0.9,
          "reason": "traced relu6 maps NaN to 0"}
PATTERN = {"pattern": {
    "kind": "JIT_Eager_Mismatch", "api": "torch.nn.functional.relu6",
    "reference_mode": {"name": "eager", "options": {}}, "test_mode": {"name": "jit.trace", "options": {}},
    "trigger": {"dtypes": [], "special_values": ["nan"], "layout": None, "shape": [], "params": {}},
    "oracle": {"kind": "NaNConsistency", "tol": None, "rtol": None, "atol": None},
    "repro": "F.relu6(x)", "source_issue": None, "confidence": 0.8}, "no_pattern_reason": None}
SEMANTICS = {"api": "torch.nn.functional.relu6", "category": "activation", "summary": "min(max(0, x), 6)",
             "parameters": [{"name": "input", "role": "input", "kind": "tensor", "default": None}],
             "input_domain": None, "dtypes": ["float32"], "has_out": False, "has_inplace": True, "has_method": False}
CHECK = {"keep": True, "reason": "same clamp path"}  # adapted_trigger omitted: keeps the ranked trigger
ANSWERS = {"TriageResult": TRIAGE, "PatternAnswer": PATTERN, "ApiSemanticsModel": SEMANTICS, "TransferCheck": CHECK}


def _answer(body: dict) -> Reply:
    """Good answers by schema; steps this test does not script are refused (400: not an outage)."""
    answer = ANSWERS.get(schema_name(body))
    return Reply(json.dumps(answer)) if answer is not None else Reply(status=400, error_message="not scripted")


def _dump(tmp_path: Path, numbers: tuple[int, ...] = (1,)) -> Path:
    issues = [{"number": n, "title": f"relu6 returns 0 for NaN under torch.jit.trace (case {n})", "body": BODY,
               "state": "open", "labels": [{"name": "module: correctness (silent)"}],
               "html_url": f"https://github.com/acme/torchish/issues/{n}",
               "repository_url": "https://api.github.com/repos/acme/torchish"} for n in numbers]
    path = tmp_path / "issues.json"
    path.write_text(json.dumps(issues))
    return path


def _env(url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"TRANSFUZZ_LLM": "openai", "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "dummy",
            "TRANSFUZZ_LLM_TIMEOUT": "3s", "TRANSFUZZ_ARTIFACTS_DIR": str(tmp_path / "artifacts"), **extra}


def _counts(db_url: str) -> dict[str, int]:
    store = open_store(db_url)
    try:
        with store.session() as session:
            return {name: session.scalar(select(func.count()).select_from(model)) or 0
                    for name, model in (("patterns", models.Pattern), ("candidates", models.Candidate),
                                        ("harnesses", models.Harness), ("llm_calls", models.LlmCall))}
    finally:
        store.close()


@pytest.fixture
def file_db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'transfuzz.db'}"


@pytest.mark.slow  # runs the fuzz stage (its 15 s minimum)
def test_run_with_openai_on_a_sqlite_file(file_db: str, tmp_path: Path) -> None:
    # the first answers are faults the backend must get past: fenced, prose+fence, a 429 with a long
    # Retry-After (capped), a 500 retried by the SDK, a malformed pattern and schema-violating semantics (repaired)
    faults = [Reply(status=429, headers={"retry-after": "120"}), Reply(status=500),
              Reply(fenced(json.dumps(TRIAGE))),
              Reply(MALFORMED), Reply(prose_then_fenced(json.dumps(PATTERN))),
              Reply(json.dumps({**SEMANTICS, "category": 7, "parameters": "input"}))]
    with ScriptedServer(faults, responder=_answer) as server:
        result = runner.invoke(app, ["--db", file_db, "--json", "run", str(_dump(tmp_path)), "--budget", "40s",
                                     "--workers", "1", "--top-k", "2", "--llm", "openai"],
                               env=_env(server.base_url, tmp_path, TRANSFUZZ_LLM_RETRY_AFTER_CAP="1"))
    assert result.exit_code == 0, (result.stdout[-2000:], result.stderr[-3000:])
    data = json.loads(result.stdout)
    extract, transfer = data["stages"]["extract"], data["stages"]["transfer"]
    assert (extract["extracted"], extract["errors"], extract["stopped"]) == (1, 0, None), extract["error_samples"]
    assert transfer["patterns"] == 1 and transfer["candidates"] >= 1 and transfer["llm_stopped"] is None
    assert data["summary"]["candidates"] >= 2  # the source re-check and at least one transferred target
    counts = _counts(file_db)
    assert counts["candidates"] >= 2 and counts["harnesses"] >= 1
    store = open_store(file_db)
    try:
        with store.session() as session:
            pattern_call = session.scalar(select(models.LlmCall).where(models.LlmCall.prompt_name == "pattern"))
            assert len(pattern_call.attempts) == 2 and pattern_call.attempts[0]["error"]  # repaired, recorded
            semantics = session.scalar(select(models.ApiSemantics).where(
                models.ApiSemantics.api == "torch.nn.functional.relu6"))
            assert semantics.source == "openai:gpt-4o-mini"  # not overwritten by the offline inventory
            proposed = session.scalars(select(models.Candidate).where(models.Candidate.status != "source")).all()
            assert all(c.adapted_trigger.get("special_values") == ["nan"] for c in proposed)  # trigger kept
    finally:
        store.close()


def test_endpoint_down_under_run_loses_nothing_and_names_the_url(file_db: str, tmp_path: Path) -> None:
    dump = _dump(tmp_path, (1, 2, 3, 4))
    ingest = runner.invoke(app, ["--db", file_db, "ingest", "file", str(dump)])
    assert ingest.exit_code == 0, ingest.stderr
    with ScriptedServer([], responder=_answer) as server:  # a first good run stores work
        first = runner.invoke(app, ["--db", file_db, "--json", "extract", "--llm", "openai", "--limit", "2"],
                              env=_env(server.base_url, tmp_path))
    assert first.exit_code == 0, first.stderr[-2000:]
    before = _counts(file_db)
    url = refused_url()
    result = runner.invoke(app, ["--db", file_db, "run", str(dump), "--budget", "40s", "--workers", "1",
                                 "--llm", "openai"],
                           env=_env(url, tmp_path, TRANSFUZZ_LLM_BREAKER="2"))
    assert result.exit_code == 1, (result.stdout[-2000:], result.stderr[-3000:])
    assert "TransFuzz run" in result.stdout  # the summary is still printed
    assert f"the LLM endpoint {url} failed" in " ".join(result.stderr.split())
    after = _counts(file_db)
    assert after["patterns"] >= before["patterns"] and after["llm_calls"] >= before["llm_calls"]
    store = open_store(file_db)
    try:
        with store.session() as session:
            due = session.scalar(select(func.count()).select_from(models.Issue)
                                 .where(models.Issue.needs_extraction.is_(True)))
            kept = session.scalar(select(func.count()).select_from(models.Pattern)
                                  .where(models.Pattern.status.in_(("extracted", "transferred"))))
    finally:
        store.close()
    assert due == 2 and kept == 2  # the two good patterns stay; the two others stay due


def test_openai_without_endpoint_under_run_is_a_usage_error(file_db: str, tmp_path: Path) -> None:
    env = {"TRANSFUZZ_LLM": "openai", "OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}
    result = runner.invoke(app, ["--db", file_db, "run", str(_dump(tmp_path))], env=env)
    assert result.exit_code == 2 and "OPENAI_BASE_URL" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize("flag", [["--llm-budget", "lots"], ["--llm-timeout", "soon"]])
def test_malformed_llm_flags_are_usage_errors(file_db: str, tmp_path: Path, flag: list[str]) -> None:
    result = runner.invoke(app, ["--db", file_db, "extract", *flag])
    assert result.exit_code == 2 and ("budget" in result.stderr or "duration" in result.stderr)
