"""Benchmark: batch extraction through the openai backend at concurrency 1 vs 8, and budget overshoot.

A loopback server speaking /v1/chat/completions answers every request after a fixed latency
(the shape of a remote endpoint: the time is the network and the model, not our CPU). The same
issues are extracted into fresh SQLite files at concurrency 1 (the baseline, measured in the same
run) and 8; the figure is issues/s and their ratio. Then a run with a token budget shows how far
parallel calls overshoot it (reserve-before-call, Note [LLM budget] in agent/llm/limits.py).
Last line: one JSON object with every figure.

    .venv/bin/python benchmarks/llm_concurrency.py [--issues 48] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

BODY = "```python\nimport torch\nx = torch.ones(4096, dtype=torch.bfloat16)\nprint(torch.cumsum(x, 0)[-1])\n```"
TRIAGE = {"is_silent_bug": True, "has_repro": True, "false_alarm_class": None, "confidence": 0.9, "reason": "bf16"}
PATTERN = {"pattern": {
    "kind": "Precision_Mismatch", "api": "torch.cumsum",
    "reference_mode": {"name": "eager", "options": {}}, "test_mode": {"name": "dtype:bfloat16", "options": {}},
    "trigger": {"dtypes": [], "special_values": [], "layout": None, "shape": ["large"], "params": {}},
    "oracle": {"kind": "ValueCorrectness", "tol": None, "rtol": None, "atol": None},
    "repro": "torch.cumsum(x, 0)", "source_issue": None, "confidence": 0.8}, "no_pattern_reason": None}
SEMANTICS = {"api": "torch.cumsum", "category": "scan", "summary": "Cumulative sum.", "parameters": [],
             "input_domain": None, "dtypes": ["float32"], "has_out": True, "has_inplace": True, "has_method": True}
PROMPT_TOKENS, COMPLETION_TOKENS = 900, 120


def _responder(latency_s: float):  # type: ignore[no-untyped-def]
    from tests.agent.llm.fake_openai_server import Reply, schema_name

    answers = {"TriageResult": TRIAGE, "PatternAnswer": PATTERN, "ApiSemanticsModel": SEMANTICS}

    def answer(body: dict) -> Reply:
        return Reply(json.dumps(answers[schema_name(body)]), delay_s=latency_s,
                     prompt_tokens=PROMPT_TOKENS, completion_tokens=COMPLETION_TOKENS)

    return answer


def _extract(workdir: Path, name: str, base_url: str, issues: int, concurrency: int,
             budget: str | None = None) -> dict:
    from agent.config import Settings
    from agent.extract.stage import run_extraction
    from db.queries.issues import IssueRow, upsert_issues
    from db.store import open_store

    store = open_store(f"sqlite:///{workdir / name}.db")
    try:
        with store.session() as session:
            upsert_issues(session, [IssueRow(repo="bench/torchish", number=n, title=f"cumsum in bf16 (report {n})",
                                             body=BODY, labels=[], state="open", created_at=None, updated_at=None,
                                             closed_at=None, url="", comments=[]) for n in range(1, issues + 1)])
        extra = {"llm_budget": budget} if budget else {}
        settings = Settings(db_url=store.url, llm="openai", openai_base_url=base_url, openai_api_key="dummy",
                            model="bench-model", llm_timeout_s=30, llm_concurrency=concurrency, **extra)
        started = time.perf_counter()
        summary = run_extraction(store, settings)
        elapsed = time.perf_counter() - started
    finally:
        store.close()
    return {"processed": summary.processed, "errors": summary.errors, "elapsed_s": round(elapsed, 3),
            "issues_per_s": round(summary.processed / elapsed, 2), "tokens": summary.tokens,
            "llm_calls": summary.llm_calls, "stopped": summary.stopped}


def main() -> None:
    from tests.agent.llm.fake_openai_server import ScriptedServer

    parser = argparse.ArgumentParser()
    parser.add_argument("--issues", type=int, default=48)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per answer")
    parser.add_argument("--budget-tokens", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer([], responder=_responder(args.latency)) as server:
        workdir = Path(tmp)
        serial = _extract(workdir, "c1", server.base_url, args.issues, 1)
        parallel = _extract(workdir, "c8", server.base_url, args.issues, 8)
        budgeted = _extract(workdir, "budget", server.base_url, args.issues, 8, budget=f"{args.budget_tokens}-tokens")
    ratio = parallel["issues_per_s"] / serial["issues_per_s"]
    overshoot = budgeted["tokens"] - args.budget_tokens
    per_call = PROMPT_TOKENS + COMPLETION_TOKENS
    print(f"latency {args.latency:g} s per answer, {args.issues} issues, 3 calls each")
    print(f"concurrency 1: {serial['issues_per_s']} issues/s ({serial['elapsed_s']} s)")
    print(f"concurrency 8: {parallel['issues_per_s']} issues/s ({parallel['elapsed_s']} s)  ratio {ratio:.2f}x")
    print(f"token budget {args.budget_tokens}: used {budgeted['tokens']} in {budgeted['llm_calls']} calls "
          f"(overshoot {overshoot:+d} tokens; one call is {per_call}); stopped: {budgeted['stopped']}")
    print(json.dumps({"issues": args.issues, "latency_s": args.latency,
                      "concurrency_1_issues_per_s": serial["issues_per_s"],
                      "concurrency_8_issues_per_s": parallel["issues_per_s"], "ratio": round(ratio, 2),
                      "errors": serial["errors"] + parallel["errors"],
                      "budget_tokens": args.budget_tokens, "budget_used_tokens": budgeted["tokens"],
                      "budget_overshoot_tokens": overshoot, "tokens_per_call": per_call,
                      "budget_calls": budgeted["llm_calls"]}))


if __name__ == "__main__":
    main()
