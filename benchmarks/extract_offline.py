"""Benchmark: offline extraction throughput on the sample issues repeated to N issues.

Figures (all measured in this run):
- analyzer: ``analyze_issue`` alone (code blocks, AST, API choice, modes, triage), issues/s;
- stage: ``run_extraction`` with the offline backend into a fresh SQLite file (triage, pattern,
  semantics rows, one transaction per issue), issues/s;
- ours vs naive: analysis plus the pattern API's semantics, where ours reuses the in-process
  semantics cache and the OpInfo index, and the naive baseline introspects torch and re-reads the
  OpInfo index for every issue (no caching) — the ratio is the speed-up;
- regex-only: a pass that takes the first ``torch.*``/``F.*`` name and mode keywords with
  regular expressions, for scale, together with both extractors' API accuracy on our labels.

Last line: one JSON object with every figure.

    .venv/bin/python benchmarks/extract_offline.py [--issues 5000] [--naive-issues 300]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

SAMPLES = REPO_ROOT / "examples" / "sample_issues.json"
LABELS = REPO_ROOT / "tests" / "agent" / "extract" / "expected_samples.json"
_REGEX_API = re.compile(r"\b(torch\.[A-Za-z_][\w.]*|F\.[a-z_]\w*|nn\.[A-Z]\w*)")
_REGEX_MODES = (("jit.trace", "jit.trace"), ("jit.script", "jit.script"), ("torch.compile", "compile:inductor"),
                ("float16", "dtype:float16"), ("bfloat16", "dtype:bfloat16"), ("cuda", "device:cuda"))


def _labels(issue: dict) -> list[str]:
    return [label["name"] if isinstance(label, dict) else str(label) for label in issue.get("labels", [])]


def regex_only(title: str, body: str) -> tuple[str | None, str | None]:
    match = _REGEX_API.search(title + "\n" + body)
    api = None
    if match:
        api = match.group(1).replace("F.", "torch.nn.functional.", 1) if match.group(1).startswith("F.") else match.group(1)
        api = api.replace("nn.", "torch.nn.", 1) if api.startswith("nn.") else api
    mode = next((m for key, m in _REGEX_MODES if key in body), None)
    return api, mode


def _rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--issues", type=int, default=5000)
    parser.add_argument("--naive-issues", type=int, default=300, help="issues for the (slow) naive baseline")
    args = parser.parse_args()

    from agent.extract.analyzer import analyze_issue
    from agent.extract.semantics import UnknownApiError, semantics_for

    samples = json.loads(SAMPLES.read_text())
    issues = [samples[i % len(samples)] for i in range(args.issues)]

    # warm-up outside the timings: torch import, the OpInfo index (built once per torch version)
    analyze_issue(samples[0]["title"], samples[0]["body"], _labels(samples[0]))
    semantics_for("torch.erfinv")

    started = time.perf_counter()
    analyses = [analyze_issue(i["title"], i["body"] or "", _labels(i)) for i in issues]
    analyzer_s = time.perf_counter() - started

    def with_semantics(issue: dict, describe) -> None:  # type: ignore[no-untyped-def]
        analysis = analyze_issue(issue["title"], issue["body"] or "", _labels(issue))
        if analysis.pattern is not None:
            try:
                describe(analysis.pattern.api)
            except UnknownApiError:
                pass

    naive_issues = issues[: args.naive_issues]
    started = time.perf_counter()
    for issue in naive_issues:
        with_semantics(issue, lambda api: semantics_for(api))
    ours_s = time.perf_counter() - started

    from agent.extract import opinfo_index as oi

    def naive_describe(api: str) -> None:
        oi.opinfo_index.cache_clear()  # no caching: read the index again for this issue
        semantics_for.__wrapped__(api)

    started = time.perf_counter()
    for issue in naive_issues:
        with_semantics(issue, naive_describe)
    naive_s = time.perf_counter() - started

    started = time.perf_counter()
    for issue in issues:
        regex_only(issue["title"], issue["body"] or "")
    regex_s = time.perf_counter() - started

    labels = {row["number"]: row for row in json.loads(LABELS.read_text())["samples"]}
    ours_hits = regex_hits = total = 0
    for issue in samples:
        label = labels[issue["number"]]
        if not label["apis"]:
            continue
        total += 1
        analysis = analyze_issue(issue["title"], issue["body"] or "", _labels(issue))
        ours_hits += analysis.pattern is not None and analysis.pattern.api in label["apis"]
        regex_hits += regex_only(issue["title"], issue["body"] or "")[0] in label["apis"]

    stage_rate = _stage(issues)

    result = {
        "issues": args.issues,
        "patterns": sum(a.pattern is not None for a in analyses),
        "analyzer_issues_per_s": _rate(len(issues), analyzer_s),
        "stage_sqlite_issues_per_s": stage_rate,
        "ours_with_semantics_issues_per_s": _rate(len(naive_issues), ours_s),
        "naive_introspection_issues_per_s": _rate(len(naive_issues), naive_s),
        "speedup_vs_naive": round(naive_s / ours_s, 1),
        "regex_only_issues_per_s": _rate(len(issues), regex_s),
        "api_accuracy_analyzer": round(ours_hits / total, 3),
        "api_accuracy_regex_only": round(regex_hits / total, 3),
    }
    print(f"analyzer            {result['analyzer_issues_per_s']:>10} issues/s ({args.issues} issues)")
    print(f"stage (SQLite)      {result['stage_sqlite_issues_per_s']:>10} issues/s")
    print(f"ours + semantics    {result['ours_with_semantics_issues_per_s']:>10} issues/s; naive introspection "
          f"{result['naive_introspection_issues_per_s']} issues/s; speed-up x{result['speedup_vs_naive']}")
    print(f"regex-only          {result['regex_only_issues_per_s']:>10} issues/s; API accuracy "
          f"{result['api_accuracy_regex_only']:.0%} vs analyzer {result['api_accuracy_analyzer']:.0%}")
    print(json.dumps(result))


def _stage(issues: list[dict]) -> float:
    """run_extraction over the issues stored in a fresh SQLite file; issues/s."""
    from agent.config import Settings
    from agent.extract.stage import run_extraction
    from agent.llm.offline import OfflineBackend
    from db.queries.issues import IssueRow, upsert_issues
    from db.store import open_store

    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{tmp}/bench.db")
        rows = [
            IssueRow(repo="bench/samples", number=n + 1, title=i["title"], body=i["body"] or "", labels=_labels(i),
                     state=i.get("state", "open"), created_at=None, updated_at=None, closed_at=None, url="", comments=[])
            for n, i in enumerate(issues)
        ]
        with store.session() as session:
            for start in range(0, len(rows), 500):
                upsert_issues(session, rows[start : start + 500])
        started = time.perf_counter()
        summary = run_extraction(store, Settings(db_url=store.url, llm="offline"), backend=OfflineBackend())
        seconds = time.perf_counter() - started
        assert summary.processed == len(issues) and summary.errors == 0, summary
        store.close()
    return _rate(len(issues), seconds)


if __name__ == "__main__":
    main()
