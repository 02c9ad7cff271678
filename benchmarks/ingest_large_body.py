"""Benchmark: peak memory and stored size when a dump holds one huge issue body (default 50 MiB).

A hostile dump can carry a body of any size; ingest caps it (``--max-body-kib``, default
256 KiB) and must not hold the huge text more than about once while reading it. Each run is a
fresh subprocess so its peak RSS is its own. Baseline (same run): ``json.load`` of the same
file, the least any whole-file reader pays. Last line: one JSON object with every figure.

    .venv/bin/python benchmarks/ingest_large_body.py [--body-mib 50]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def write_dump(path: Path, body_mib: int) -> int:
    """Three ordinary issues around one whose body is ``body_mib`` MiB, as a JSON array."""
    def issue(number: int, body: str) -> dict:
        return {"number": number, "title": f"Issue {number}", "body": body, "state": "open", "labels": [],
                "html_url": f"https://github.com/bench/torch/issues/{number}"}

    with path.open("w", encoding="utf-8") as fh:
        fh.write("[" + json.dumps(issue(1, "small")) + ",\n")
        head = json.dumps(issue(2, "BODY"))
        before, after = head.split('"BODY"')
        fh.write(before + '"')
        line = "x" * 1023 + "\\n"  # an escaped newline every KiB, as real bodies have
        for _ in range(body_mib * 1024):
            fh.write(line)
        fh.write('"' + after + ",\n" + json.dumps(issue(3, "small")) + ",\n" + json.dumps(issue(4, "small")) + "]\n")
    return path.stat().st_size


CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
mode, dump, db = sys.argv[1], sys.argv[2], sys.argv[3]
from db.store import open_store
from agent.ingest.file_source import ingest_file
store = open_store("sqlite:///" + db)
def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
before = rss_mb()
t0 = time.perf_counter()
if mode == "ingest":
    summary = ingest_file(store, dump)
    issues = summary.new
else:
    with open(dump, encoding="utf-8") as fh:
        issues = len(json.load(fh))
print(json.dumps(dict(issues=issues, seconds=time.perf_counter() - t0, rss_growth_mb=rss_mb() - before)))
"""


def measure(mode: str, dump: Path, db: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=str(REPO_ROOT)), mode, str(dump), str(db)],
                         check=True, capture_output=True, text=True, cwd=REPO_ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def stored_bytes(db: Path) -> int:
    """Bytes of issue text kept in the database: body plus the raw JSON column."""
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COALESCE(SUM(LENGTH(body) + LENGTH(raw)), 0) FROM issues").fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--body-mib", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dump = work / "huge.json"
        size = write_dump(dump, args.body_mib)
        ingest = measure("ingest", dump, work / "a.db")
        kept = stored_bytes(work / "a.db")
        baseline = measure("json_load", dump, work / "b.db")
    print(f"dump {size / 2**20:.1f} MiB with one {args.body_mib} MiB body")
    print(f"ingest      {ingest['seconds']:6.2f}s  peak RSS growth {ingest['rss_growth_mb']:8.1f} MiB  stored {kept / 2**20:.2f} MiB")
    print(f"json.load   {baseline['seconds']:6.2f}s  peak RSS growth {baseline['rss_growth_mb']:8.1f} MiB")
    print(json.dumps({
        "benchmark": "ingest_large_body",
        "body_mib": args.body_mib,
        "issues": ingest["issues"],
        "ingest_seconds": round(ingest["seconds"], 2),
        "ingest_peak_rss_growth_mib": round(ingest["rss_growth_mb"], 1),
        "json_load_peak_rss_growth_mib": round(baseline["rss_growth_mb"], 1),
        "ratio_ingest_over_json_load": round(ingest["rss_growth_mb"] / max(baseline["rss_growth_mb"], 1.0), 2),
        "stored_text_mib": round(kept / 2**20, 2),
    }))


if __name__ == "__main__":
    main()
