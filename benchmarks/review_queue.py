"""Response time of the review queue at 10,000 and 100,000 findings, SQLite and (if given) PostgreSQL.

Fills a fresh database per size, starts the real server on loopback and times GET /queue (the
HTML page) and GET /api/findings: the first page, a page deep into the queue reached by its
keyset cursor, and a filtered page. The ratio is 100k over 10k for the deep page: keyset paging
keeps it near 1 where OFFSET would grow with the depth. Last line: one JSON object.

    .venv/bin/python benchmarks/review_queue.py [--pg postgresql+psycopg://postgres@127.0.0.1:5432/test]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx
import uvicorn
from sqlalchemy import insert, text

from agent.web.app import WebConfig, create_app
from agent.web.security import ReviewAuth
from db.engine import make_engine
from db.models import Finding, Harness
from db.store import Store, open_store

SIZES = (10_000, 100_000)
VERDICTS = ("confirmed", "suspicious", "passed", "flaky")
APIS = ("torch.relu", "torch.tanh", "torch.sigmoid", "torch.mm", "torch.add")


def fill(store: Store, n: int) -> None:
    with store.session() as session:
        harness_ids = []
        for api in APIS:
            harness = Harness(candidate_id=None, spec={"api": api, "reference_mode": "eager", "test_mode": "compile:inductor",
                                                       "kind": "Compile_Eager_Mismatch", "dtype": "float32"}, status="done")
            session.add(harness)
            session.flush()
            harness_ids.append(harness.id)
    rows = [
        {"harness_id": harness_ids[i % len(APIS)], "verdict": VERDICTS[i % len(VERDICTS)], "reason": "bench",
         "evidence": {"max_abs_diff": float(i % 97), "dtype": "float32"}, "repro": "", "signature": f"sig{i % 500}",
         "review_status": "unreviewed"}
        for i in range(n)
    ]
    with store.engine.begin() as conn:
        for start in range(0, n, 10_000):
            conn.execute(insert(Finding), rows[start:start + 10_000])


def settle(store: Store) -> None:
    """On PostgreSQL, what autovacuum does soon after a bulk insert: statistics and the visibility map.

    Without it the planner guesses row counts for a table it has never analysed and no index-only
    scan can skip the heap, so the figures would be those of the first minute after a bulk load.
    """
    if store.engine.dialect.name != "postgresql":
        return
    with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE findings"))


def timed(client: httpx.Client, url: str, params: dict[str, object], repeats: int = 5) -> tuple[float, httpx.Response]:
    times, response = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        response = client.get(url, params=params)
        times.append((time.perf_counter() - start) * 1000)
        response.raise_for_status()
    return statistics.median(times), response  # type: ignore[return-value]


def measure(store: Store) -> dict[str, float]:
    app = create_app(WebConfig(store=store, auth=ReviewAuth("benchmark-token-0123456789"), reviewer="bench"))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
            out: dict[str, float] = {}
            out["page_first_ms"], _ = timed(client, "/queue", {})
            out["api_first_ms"], first = timed(client, "/api/findings", {"limit": 500})
            cursor = first.json()["next_cursor"]
            for _ in range(15):  # walk 8,000 rows deep by cursor
                cursor = client.get("/api/findings", params={"limit": 500, "cursor": cursor}).json()["next_cursor"]
            out["api_deep_ms"], _ = timed(client, "/api/findings", {"limit": 50, "cursor": cursor})
            out["api_filtered_ms"], _ = timed(client, "/api/findings", {"verdict": "confirmed", "api": "torch.mm"})
            out["api_verdict_counts_ms"], _ = timed(client, "/api/findings", {"verdict": "confirmed", "limit": 1})
            return out
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def pg_database(admin_url: str) -> tuple[str, callable]:  # type: ignore[valid-type]
    name = f"tf_bench_{uuid.uuid4().hex[:10]}"
    admin = make_engine(admin_url).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return admin_url.rpartition("/")[0] + "/" + name, drop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg", help="PostgreSQL admin URL; a throw-away database is made per size")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for backend in ("sqlite", "postgresql") if args.pg else ("sqlite",):
            for n in SIZES:
                drop = None
                if backend == "sqlite":
                    url = f"sqlite:///{Path(folder) / f'bench_{n}.db'}"
                else:
                    url, drop = pg_database(args.pg)
                store = open_store(url)
                try:
                    start = time.perf_counter()
                    fill(store, n)
                    settle(store)
                    filled = time.perf_counter() - start
                    numbers = measure(store)
                finally:
                    store.close()
                    if drop:
                        drop()
                results[f"{backend}_{n}"] = numbers
                print(f"{backend} {n:>7} findings (filled in {filled:.1f} s): "
                      + ", ".join(f"{k} {v:.1f}" for k, v in numbers.items()), flush=True)
    summary: dict[str, object] = {"results": results}
    for backend in ("sqlite", "postgresql"):
        small, large = results.get(f"{backend}_{SIZES[0]}"), results.get(f"{backend}_{SIZES[1]}")
        if small and large:
            summary[f"{backend}_deep_page_ratio_100k_vs_10k"] = round(large["api_deep_ms"] / small["api_deep_ms"], 2)
            summary[f"{backend}_first_page_ratio_100k_vs_10k"] = round(large["page_first_ms"] / small["page_first_ms"], 2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
