"""Benchmark: ingest synthetic issue dumps into SQLite; issues/s and peak memory vs a naive baseline.

Each measurement runs in a fresh subprocess so peak RSS is its own. Memory is reported as the
growth of peak RSS during the ingest (after imports and opening the database), at two dump
sizes, to show that streaming keeps it flat while ``json.load`` grows with the file.
Baseline (same run): ``json.load`` of the whole dump, then one ORM SELECT and ``session.add``
per issue, committed once. Last line: one JSON object with every figure.

    .venv/bin/python benchmarks/ingest_file.py [--issues 20000] [--small 2000]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
LABELS = ["module: correctness (silent)", "oncall: jit", "module: inductor", "triaged", "module: NaNs and Infs",
          "high priority", "module: cpu", "module: half"]
WORDS = ("tensor output mismatch eager compiled fp16 bf16 nan inf gradient kernel layout stride contiguous "
         "channels_last reduction overflow precision reproduce expected actual version cuda cpu").split()


def write_dump(path: Path, count: int, seed: int = 0) -> int:
    """A JSON array of ``count`` GitHub REST issue objects (about 2 KB each), written streaming."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[\n")
        for number in range(1, count + 1):
            body = " ".join(rng.choice(WORDS) for _ in range(220))
            issue = {
                "url": f"https://api.github.com/repos/bench/torch/issues/{number}",
                "repository_url": "https://api.github.com/repos/bench/torch",
                "html_url": f"https://github.com/bench/torch/issues/{number}",
                "id": 10_000_000 + number,
                "number": number,
                "title": f"Issue {number}: " + " ".join(rng.choice(WORDS) for _ in range(8)),
                "user": {"login": f"user{rng.randrange(5000)}", "id": rng.randrange(10**8), "type": "User"},
                "labels": [{"id": k, "name": name, "color": "ededed", "default": False}
                           for k, name in enumerate(rng.sample(LABELS, 3))],
                "state": rng.choice(["open", "closed"]),
                "locked": False,
                "comments": rng.randrange(12),
                "created_at": f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T10:00:00Z",
                "updated_at": f"2025-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T12:00:00Z",
                "closed_at": None,
                "author_association": "NONE",
                "body": "### Bug\n" + body + "\n```python\nimport torch\nprint(torch.mm(a, b))\n```",
            }
            fh.write(json.dumps(issue))
            fh.write(",\n" if number < count else "\n")
        fh.write("]\n")
    return path.stat().st_size


# Code run in the child processes: import, open the database, note RSS, ingest, note peak RSS.
CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
mode, dump, db = sys.argv[1], sys.argv[2], sys.argv[3]
from db.store import open_store
from db.models import Issue
from db.queries.issues import content_hash
from agent.ingest.file_source import ingest_file
from agent.ingest.records import normalise, BadRecord, PullRequest
from sqlalchemy import select
store = open_store("sqlite:///" + db)
def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
before = rss_mb()
t0 = time.perf_counter()
if mode == "stream":
    summary = ingest_file(store, dump)
    n = summary.new + summary.updated + summary.unchanged
    counts = dict(new=summary.new, updated=summary.updated, unchanged=summary.unchanged)
else:
    with open(dump, encoding="utf-8") as fh:
        records = json.load(fh)
    n = 0
    with store.session() as session:
        for obj in records:
            row = normalise(obj)
            found = session.scalar(select(Issue).where(Issue.repo == row.repo, Issue.number == row.number))
            digest = content_hash(row.title, row.body, row.labels, row.state, [])
            if found is None:
                session.add(Issue(repo=row.repo, number=row.number, title=row.title, body=row.body, labels=row.labels,
                                  state=row.state, created_at=row.created_at, updated_at=row.updated_at,
                                  closed_at=row.closed_at, url=row.url, comments=[], raw=row.raw,
                                  content_hash=digest, needs_extraction=True))
            n += 1
    counts = dict(new=n)
elapsed = time.perf_counter() - t0
print(json.dumps(dict(issues=n, seconds=elapsed, rss_before_mb=before, rss_peak_mb=rss_mb(), **counts)))
"""


def measure(mode: str, dump: Path, db: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(root=str(REPO_ROOT)), mode, str(dump), str(db)],
        check=True, capture_output=True, text=True, cwd=REPO_ROOT,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["issues_per_s"] = result["issues"] / result["seconds"]
    result["rss_growth_mb"] = result["rss_peak_mb"] - result["rss_before_mb"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--issues", type=int, default=20_000)
    parser.add_argument("--small", type=int, default=2_000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        big, small = work / "big.json", work / "small.json"
        big_bytes = write_dump(big, args.issues)
        small_bytes = write_dump(small, args.small, seed=1)
        print(f"dumps: {args.issues} issues = {big_bytes / 2**20:.1f} MiB, {args.small} issues = {small_bytes / 2**20:.1f} MiB")

        runs = {
            "stream_small": measure("stream", small, work / "a.db"),
            "stream": measure("stream", big, work / "b.db"),
        }
        runs["stream_reingest"] = measure("stream", big, work / "b.db")  # same database: all unchanged
        runs["naive_small"] = measure("naive", small, work / "c.db")
        runs["naive"] = measure("naive", big, work / "d.db")

    for name, r in runs.items():
        print(f"{name:16s} {r['issues']:6d} issues  {r['seconds']:6.2f}s  {r['issues_per_s']:8.0f} issues/s  "
              f"peak RSS growth {r['rss_growth_mb']:7.1f} MiB")
    assert runs["stream"]["new"] == args.issues and runs["stream_reingest"]["unchanged"] == args.issues
    speedup = runs["stream"]["issues_per_s"] / runs["naive"]["issues_per_s"]
    memory_ratio = runs["naive"]["rss_growth_mb"] / max(runs["stream"]["rss_growth_mb"], 1.0)
    flat = runs["stream"]["rss_growth_mb"] / max(runs["stream_small"]["rss_growth_mb"], 1.0)
    print(f"streaming ingest: {speedup:.1f}x the baseline's issues/s, {memory_ratio:.1f}x less memory growth; "
          f"memory at {args.issues} vs {args.small} issues: {flat:.2f}x (naive: "
          f"{runs['naive']['rss_growth_mb'] / max(runs['naive_small']['rss_growth_mb'], 1.0):.2f}x)")
    print(json.dumps({
        "benchmark": "ingest_file",
        "issues": args.issues,
        "dump_mib": round(big_bytes / 2**20, 1),
        "issues_per_s": round(runs["stream"]["issues_per_s"]),
        "reingest_issues_per_s": round(runs["stream_reingest"]["issues_per_s"]),
        "baseline_issues_per_s": round(runs["naive"]["issues_per_s"]),
        "speedup_vs_baseline": round(speedup, 2),
        "peak_rss_growth_mib": round(runs["stream"]["rss_growth_mb"], 1),
        "peak_rss_growth_small_mib": round(runs["stream_small"]["rss_growth_mb"], 1),
        "baseline_peak_rss_growth_mib": round(runs["naive"]["rss_growth_mb"], 1),
        "baseline_peak_rss_growth_small_mib": round(runs["naive_small"]["rss_growth_mb"], 1),
        "memory_ratio_baseline_over_stream": round(memory_ratio, 2),
        "target_issues_per_s": 2000,
        "meets_target": runs["stream"]["issues_per_s"] >= 2000,
    }))


if __name__ == "__main__":
    main()
