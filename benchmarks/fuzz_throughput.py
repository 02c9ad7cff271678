#!/usr/bin/env python3
"""Differential executions per second: our in-process campaign loop vs a fresh Python process per test program.

LLM-based fuzzers write each test program to a file and run it in a new interpreter: torch import,
input creation, compilation and the comparison are paid per program. Our loop keeps the process, the
compiled callable and the traced graph, and only pays for the two runs, the comparison and (on
disagreement) the confirmation checks. Both sides run the same check: eager vs test mode on small CPU
ops, with default tolerances and a float64 reference for disagreements.

Usage: python benchmarks/fuzz_throughput.py [--seconds 8] [--programs 3]
The last line is one JSON object; `ratio` is the geometric mean over the mode pairs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

OPS = ("torch.nn.functional.relu6", "torch.add", "torch.sigmoid")
PAIRS = (("eager", "jit.trace"), ("eager", "compile:inductor"))

# What one generated test program does, the way program-per-process fuzzers run it.
PROGRAM = '''
import torch
from torch._dynamo.utils import same
import torch._inductor.config
torch._inductor.config.fallback_random = True
op = {op}
g = torch.Generator().manual_seed({seed})
args = tuple(torch.randn(8, 8, generator=g) for _ in range({arity}))
ref = op(*args)
{make_test}
res = test(*args)
ok = torch.allclose(ref, res, rtol=1.3e-6, atol=1e-5, equal_nan=True)
if not ok:
    ok = same(ref, res, fp64_ref=op(*(a.double() for a in args)), tol=1e-4, equal_nan=True)
print("ok" if ok else "MISMATCH")
'''

HARNESS = '''
def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(8, 8, generator=g) for _ in range({arity})), {{}}

target = {op}
'''

MAKE_TEST = {
    "jit.trace": "test = torch.jit.trace(lambda *a: op(*a), args, check_trace=False)",
    "compile:inductor": "test = torch.compile(lambda *a: op(*a), backend='inductor')",
}


def arity(op: str) -> int:
    return 2 if op == "torch.add" else 1


def ours(test_mode: str, seconds: float) -> dict[str, float]:
    """Executions/s of run_harness in this process, compilation included (fresh per op)."""
    from fuzz_core import HarnessSpec, run_harness

    executions, elapsed = 0, 0.0
    for op in OPS:
        # The same inputs as the baseline programs: small (8, 8) tensors; then mutation takes over.
        code = HARNESS.format(op=op, arity=arity(op))
        spec = HarnessSpec(api=op, input_source="code", code=code, test_mode=test_mode, seed=1)
        result = run_harness(spec, budget_s=seconds, workdir=tempfile.mkdtemp(prefix="tf_bench_"))
        if result.verdict not in ("passed", "suspicious", "flaky", "confirmed"):
            raise SystemExit(f"benchmark harness failed for {op} {test_mode}: {result.verdict} {result.reason}")
        executions += result.executions
        elapsed += result.elapsed_s
    return {"executions": executions, "seconds": elapsed, "per_s": executions / elapsed}


def baseline(test_mode: str, programs: int) -> dict[str, float]:
    """Programs/s when every check is a fresh interpreter running one generated program."""
    workdir = Path(tempfile.mkdtemp(prefix="tf_bench_programs_"))
    count, start = 0, time.monotonic()
    for i in range(programs):
        op = OPS[i % len(OPS)]
        path = workdir / f"program_{i}.py"
        path.write_text(PROGRAM.format(op=op, seed=i, arity=arity(op), make_test=MAKE_TEST[test_mode]))
        run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600,
                             env={**os.environ, "PYTHONWARNINGS": "ignore"})
        if run.returncode != 0 or "ok" not in run.stdout:
            raise SystemExit(f"baseline program failed: {run.stderr[-2000:]}")
        count += 1
    elapsed = time.monotonic() - start
    return {"programs": count, "seconds": elapsed, "per_s": count / elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="our loop's budget per op and mode pair")
    parser.add_argument("--programs", type=int, default=3, help="fresh-process programs per mode pair")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)  # the baseline programs are single-op checks too; keep the comparison per core
    figures: dict[str, dict[str, float]] = {}
    for reference, test_mode in PAIRS:
        ours_fig = ours(test_mode, args.seconds)
        base_fig = baseline(test_mode, args.programs)
        ratio = ours_fig["per_s"] / base_fig["per_s"]
        figures[f"{reference}_vs_{test_mode}"] = {
            "ours_exec_per_s": round(ours_fig["per_s"], 2), "ours_executions": ours_fig["executions"],
            "baseline_programs_per_s": round(base_fig["per_s"], 4), "baseline_s_per_program": round(
                base_fig["seconds"] / base_fig["programs"], 3), "ratio": round(ratio, 1)}
        print(f"{reference} vs {test_mode}: ours {ours_fig['per_s']:.1f} exec/s "
              f"({ours_fig['executions']} in {ours_fig['seconds']:.1f} s, compilation included); "
              f"fresh process per program {base_fig['per_s']:.3f} programs/s "
              f"({base_fig['seconds'] / base_fig['programs']:.2f} s each); ratio {ratio:.0f}x", flush=True)
    ratios = [f["ratio"] for f in figures.values()]
    overall = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(json.dumps({"benchmark": "fuzz_throughput", "ratio": round(overall, 1), "min_ratio": min(ratios),
                      "target_ratio": 1000, "ops": list(OPS), "pairs": figures,
                      "torch_version": torch.__version__, "threads": 1}))


if __name__ == "__main__":
    main()
