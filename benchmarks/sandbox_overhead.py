#!/usr/bin/env python3
"""What the bubblewrap sandbox costs: executions/s of the same harnesses through WorkerPool, with and without it.

Two one-worker pools run side by side in the same run, one sandboxed (bwrap) and one not (sandbox=False);
each harness runs on both, alternating, for a fixed time budget per run, and a run's rate is its
executions over the wall time the parent waited for it (submit to result). The figure per harness is the
median over the repetitions; overhead = 1 - sandboxed/plain. Worker start-up (bwrap set-up plus the torch
import, paid once per worker) is reported apart. Small tensors make the per-execution work small, so any
per-call cost of the sandbox would show.

Usage: python benchmarks/sandbox_overhead.py [--seconds 2] [--reps 3]
The last line is one JSON object; `max_overhead` should stay under `target` (0.15).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

INPUTS = '''
def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(8, 8, generator=g) for _ in range(@ARITY@)), {}
'''
HARNESSES = {  # name: (api, arity, test mode)
    "add eager/eager": ("torch.add", 2, "eager"),
    "relu6 eager/noncontiguous": ("torch.nn.functional.relu6", 1, "layout:noncontiguous"),
    "sigmoid eager/jit.trace": ("torch.sigmoid", 1, "jit.trace"),
}
TARGET = 0.15


def _spec(name: str):  # type: ignore[no-untyped-def]
    from fuzz_core import HarnessSpec

    api, arity, test_mode = HARNESSES[name]
    return HarnessSpec(api=api, input_source="code", code=INPUTS.replace("@ARITY@", str(arity)), test_mode=test_mode)


def _rate(pool, name: str, seconds: float) -> float:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    result = pool.submit(_spec(name), budget_s=seconds).result()
    if result.verdict != "passed":
        raise SystemExit(f"{name}: expected passed, got {result.verdict}: {result.reason}")
    return result.executions / (time.monotonic() - started)


def _started_pool(sandbox: bool, root: Path):  # type: ignore[no-untyped-def]
    from fuzz_core import WorkerPool

    pool = WorkerPool(1, task_timeout_s=120, preload_opinfo=False, workdir=root / ("sandboxed" if sandbox else "plain"),
                      sandbox=sandbox).__enter__()
    started = time.monotonic()
    pool.submit(_spec("add eager/eager"), max_executions=1).result()  # starts the worker
    return pool, time.monotonic() - started


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="budget of one harness run")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tf_bench_sandbox_"))
    sandboxed, start_sandboxed = _started_pool(True, root)
    plain, start_plain = _started_pool(False, root)
    rates: dict[str, dict[str, list[float]]] = {n: {"sandboxed": [], "plain": []} for n in HARNESSES}
    try:
        for rep in range(args.reps):
            for name in HARNESSES:
                order = [("sandboxed", sandboxed), ("plain", plain)]
                for label, pool in order if rep % 2 == 0 else order[::-1]:
                    rates[name][label].append(_rate(pool, name, args.seconds))
    finally:
        sandboxed.close()
        plain.close()
    figures = {}
    for name, both in rates.items():
        s, p = statistics.median(both["sandboxed"]), statistics.median(both["plain"])
        figures[name] = {"sandboxed_eps": round(s, 1), "plain_eps": round(p, 1), "ratio": round(s / p, 3),
                         "overhead": round(1 - s / p, 3)}
        print(f"{name:28s} sandboxed {s:8.1f}/s  plain {p:8.1f}/s  ratio {s / p:.3f}  overhead {1 - s / p:+.1%}")
    print(f"worker start-up: sandboxed {start_sandboxed:.2f} s, plain {start_plain:.2f} s")
    max_overhead = max(f["overhead"] for f in figures.values())
    print(json.dumps({"benchmark": "sandbox_overhead", "seconds": args.seconds, "reps": args.reps,
                      "harnesses": figures, "startup_s": {"sandboxed": round(start_sandboxed, 2),
                                                          "plain": round(start_plain, 2)},
                      "max_overhead": max_overhead, "target": TARGET, "within_target": max_overhead < TARGET}))


if __name__ == "__main__":
    main()
