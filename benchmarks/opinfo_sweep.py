#!/usr/bin/env python3
"""Sweep OpInfo ops through the fuzz core (float32 jit.trace and compile:inductor by default), resumably.

Each (op, mode) pair is one harness run in the sandboxed worker pool with a small budget. Results are
appended to a JSON file after every harness, so an interrupted sweep resumes where it stopped.

Usage: python benchmarks/opinfo_sweep.py --out sweep.json [--modes jit.trace,compile:inductor]
       [--max-executions 12] [--time-limit 3600] [--workers 2] [--limit N]
The last line is one JSON object with the verdict counts per mode (and `ratio`: confirmed per tested op).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

EVIDENCE_KEYS = ("max_abs_diff", "max_rel_diff", "mismatch_count", "ref_error_vs_fp64", "test_error_vs_fp64",
                 "backend_ablation", "inputs_path", "repro_path", "input", "location", "fp64_accepted", "how")


def load(path: Path) -> dict[str, dict]:
    if path.exists():
        return json.loads(path.read_text())
    return {}


def save(path: Path, results: dict[str, dict]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=1, sort_keys=True, default=str))
    os.replace(tmp, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("opinfo_sweep.json"))
    parser.add_argument("--modes", default="jit.trace,compile:inductor")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--max-executions", type=int, default=12)
    parser.add_argument("--max-samples", type=int, default=4)
    parser.add_argument("--time-limit", type=float, default=3600.0, help="stop submitting after this many seconds")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="only the first N ops (smoke runs)")
    parser.add_argument("--include-private", action="store_true",
                        help="also sweep torch._* ops (not user-facing; maintainers do not take reports on them)")
    args = parser.parse_args()

    from fuzz_core import HarnessSpec, WorkerPool
    from fuzz_core.inputs.opinfo import opinfo_api_names

    results = load(args.out)
    ops = [api for api in opinfo_api_names() if args.include_private or not api.split(".")[-1].startswith("_")]
    ops = ops[: args.limit]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    todo = [(api, mode) for mode in modes for api in ops if f"{api}|{mode}|{args.dtype}" not in results]
    print(f"{len(ops)} ops x {len(modes)} modes; {len(todo)} harnesses to run, {len(results)} already done",
          flush=True)
    start = time.monotonic()
    artifacts = args.out.parent / (args.out.stem + "_artifacts")
    with WorkerPool(args.workers, task_timeout_s=180, memory_limit_mb=8192, workdir=artifacts) as pool:
        pending = []
        queue = list(todo)
        while queue or pending:
            while queue and len(pending) < args.workers * 2 and time.monotonic() - start < args.time_limit:
                api, mode = queue.pop(0)
                kind = "JIT_Eager_Mismatch" if mode.startswith("jit") else (
                    "Compile_Eager_Mismatch" if mode.startswith("compile") else "Precision_Mismatch")
                spec = HarnessSpec(api=api, test_mode=mode, dtype=args.dtype, seed=0, max_samples=args.max_samples,
                                   kind=kind)
                pending.append((api, mode, pool.submit(spec, max_executions=args.max_executions)))
            if not pending:
                break
            api, mode, future = pending.pop(0)
            result = future.result()
            results[f"{api}|{mode}|{args.dtype}"] = {
                "api": api, "mode": mode, "dtype": args.dtype, "verdict": result.verdict,
                "reason": result.reason[:500], "executions": result.executions,
                "elapsed_s": round(result.elapsed_s, 2), "signature": result.signature,
                "evidence": {k: result.evidence.get(k) for k in EVIDENCE_KEYS if k in result.evidence},
            }
            save(args.out, results)
            print(f"{api} {mode}: {result.verdict} ({result.reason[:120]})", flush=True)
    summary: dict[str, dict[str, int]] = {}
    for entry in results.values():
        if entry["dtype"] != args.dtype:
            continue
        summary.setdefault(entry["mode"], Counter())[entry["verdict"]] += 1  # type: ignore[index]
    tested = {m: sum(c.values()) - c.get("not_applicable", 0) for m, c in summary.items()}
    confirmed = sum(c.get("confirmed", 0) for c in summary.values())
    print(json.dumps({"benchmark": "opinfo_sweep", "dtype": args.dtype,
                      "counts": {m: dict(c) for m, c in summary.items()}, "tested": tested,
                      "confirmed": confirmed,
                      "ratio": round(confirmed / max(1, sum(tested.values())), 4),
                      "elapsed_s": round(time.monotonic() - start, 1)}))


if __name__ == "__main__":
    main()
