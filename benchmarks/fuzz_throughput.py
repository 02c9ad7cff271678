#!/usr/bin/env python3
"""Differential checks per second, single thread, in one run: the sandboxed WorkerPool against hand-written loops.

Rows, for each op and mode pair (eager vs jit.trace, eager vs compile:inductor), on fresh 8x8 float32 inputs:
- pool:        the sandboxed `WorkerPool(1)` with default settings (bubblewrap, op-level instrumentation, OpInfo
               preloaded), one harness submitted and waited for: executions / round-trip wall time (harness set-up,
               the compilations and the answer over the pipe included). The worker is started before timing.
- pool, values only: a second such pool, the same harness with mutate="values" (Note [Value-only mutation] in
               fuzz_core/campaign.py): every input an 8x8 float32 tensor as the hand loop's are, values mutated
               (noise, special and boundary values, offsets); the default row also explores shapes, strides and
               dtypes, each new structure a new compilation the hand loop never makes.
- in-process:  the same harness through `run_harness` in this process (what the pool adds is sandbox + IPC).
- hand loop:   what a person would write: `jit.trace` (or `torch.compile`) once, then
               `torch.allclose(op(x), test(x))` on a fresh input per check; the one trace/compilation is inside
               the timed window, as the pool's is.
- re-trace:    the hand loop re-tracing for every input (jit.trace only: a compilation per input would measure
               the compiler, which the fresh-process line already does).
- fresh process: one generated program per interpreter (torch import, input, test mode, compare), as
               program-per-process fuzzers run their checks.
Every rate is given all-in (one-time tracing/compilation inside the window) and steady (that time taken out:
the pool's own compile_s tally, the hand loop's first trace and call), since a short window is mostly compilation
for inductor. This process compiles into a fresh inductor cache, as each pool does, so neither side reuses kernels
an earlier run left. Ratios: pool / hand loop (target >= 0.5, issue 23) and pool / fresh process, per pair as the
geometric mean over the ops. The machine's load average is printed before and after: on a busy machine every row is slowed, so the
ratios measured in one run are what counts, not the absolute rates.

Usage: python benchmarks/fuzz_throughput.py [--seconds 5] [--compile-seconds 20] [--programs 3] [--profile]
`--profile` also prints where one in-process execution's time goes (cProfile of the campaign loop, by stage).
The last line is one JSON object.
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
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

OPS = ("torch.nn.functional.relu6", "torch.add", "torch.sigmoid")
PAIRS = (("eager", "jit.trace"), ("eager", "compile:inductor"))
SHAPE = (8, 8)

# What one generated test program does, the way program-per-process fuzzers run it.
PROGRAM = '''
import torch
from torch._dynamo.utils import same
import torch._inductor.config
torch.set_num_threads(1)
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

MAKE_TEST = {
    "jit.trace": "test = torch.jit.trace(lambda *a: op(*a), args, check_trace=False)",
    "compile:inductor": "test = torch.compile(lambda *a: op(*a), backend='inductor')",
}


def arity(op: str) -> int:
    return 2 if op == "torch.add" else 1


def load_average() -> tuple[float, float, float]:
    return os.getloadavg()


def harness(op: str, test_mode: str, mutate: str = "all") -> Any:
    """The pool's harness: the op on described (8, 8) float32 tensors, then mutation takes over."""
    from fuzz_core import HarnessSpec

    tensor = {"kind": "tensor", "tensor": {"shape": list(SHAPE)}}
    return HarnessSpec(api=op, input_source="described", inputs={"args": [tensor] * arity(op)},
                       test_mode=test_mode, seed=1, mutate=mutate)


def _checked(result: Any, what: str) -> Any:
    if result.verdict not in ("passed", "suspicious", "flaky", "confirmed"):
        raise SystemExit(f"benchmark harness failed ({what}): {result.verdict} {result.reason}")
    return result


def pool_rate(pool: Any, op: str, test_mode: str, seconds: float, mutate: str = "all") -> dict[str, float]:
    """Executions per second of one harness through the sandboxed pool, measured around the round trip."""
    started = time.perf_counter()
    result = _checked(pool.submit(harness(op, test_mode, mutate), budget_s=seconds).result(),
                      f"pool {op} {test_mode} mutate={mutate}")
    wall = time.perf_counter() - started
    compile_s = float(result.evidence.get("compile_s") or 0.0)
    return {"executions": result.executions, "seconds": wall, "per_s": result.executions / wall,
            "compile_s": compile_s, "steady_per_s": result.executions / max(wall - compile_s, 1e-9)}


def in_process_rate(op: str, test_mode: str, seconds: float) -> dict[str, float]:
    from fuzz_core import run_harness

    started = time.perf_counter()
    result = _checked(run_harness(harness(op, test_mode), budget_s=seconds,
                                  workdir=tempfile.mkdtemp(prefix="tf_bench_")), f"in-process {op} {test_mode}")
    wall = time.perf_counter() - started
    compile_s = float(result.evidence.get("compile_s") or 0.0)
    return {"executions": result.executions, "seconds": wall, "per_s": result.executions / wall,
            "steady_per_s": result.executions / max(wall - compile_s, 1e-9)}


def _resolve(op: str) -> Callable[..., Any]:
    import torch

    obj: Any = torch
    for part in op.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def hand_loop(op: str, test_mode: str, seconds: float, *, retrace: bool = False) -> dict[str, float]:
    """trace/compile once (or, with `retrace`, per input), then allclose(op(x), test(x)) on fresh inputs."""
    import torch

    fn = _resolve(op)
    n = arity(op)
    gen = torch.Generator().manual_seed(0)

    def fresh() -> tuple[torch.Tensor, ...]:
        return tuple(torch.randn(*SHAPE, generator=gen) for _ in range(n))

    def make(args: tuple[torch.Tensor, ...]) -> Callable[..., Any]:
        if test_mode == "jit.trace":
            return torch.jit.trace(lambda *a: fn(*a), args, check_trace=False)
        return torch.compile(lambda *a: fn(*a), backend="inductor")

    if test_mode.startswith("compile"):
        torch._dynamo.reset()
    started = time.perf_counter()
    args = fresh()
    test = make(args)
    bad = int(not torch.allclose(fn(*args), test(*args), equal_nan=True))  # the first call compiles
    checks, setup_s = 1, time.perf_counter() - started
    deadline = started + max(seconds, setup_s + 1.0)
    while time.perf_counter() < deadline:
        args = fresh()
        if retrace:
            test = make(args)
        bad += not torch.allclose(fn(*args), test(*args), equal_nan=True)
        checks += 1
    wall = time.perf_counter() - started
    return {"executions": checks, "seconds": wall, "per_s": checks / wall, "mismatches": bad,
            "steady_per_s": (checks - 1) / max(wall - setup_s, 1e-9) if not retrace else checks / wall}


def fresh_process_rate(test_mode: str, programs: int) -> dict[str, float]:
    """Programs/s when every check is a fresh interpreter running one generated program."""
    workdir = Path(tempfile.mkdtemp(prefix="tf_bench_programs_"))
    count, started = 0, time.perf_counter()
    for i in range(programs):
        op = OPS[i % len(OPS)]
        path = workdir / f"program_{i}.py"
        path.write_text(PROGRAM.format(op=op, seed=i, arity=arity(op), make_test=MAKE_TEST[test_mode]))
        run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600,
                             env={**os.environ, "PYTHONWARNINGS": "ignore", "OMP_NUM_THREADS": "1"})
        if run.returncode != 0 or "ok" not in run.stdout:
            raise SystemExit(f"fresh-process program failed: {run.stderr[-2000:]}")
        count += 1
    wall = time.perf_counter() - started
    return {"executions": count, "seconds": wall, "per_s": count / wall}


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(max(v, 1e-12)) for v in values) / len(values))


STAGES = {  # where one execution's time goes: (file, function, sign[, caller]) entry points, their cumulative CPU
    # time (only the calls made from `caller` where one is named)
    "mutation (parent, mutator, mutate)": (("campaign.py", "_next_entry", 1),),
    # measured inputs run through run_mode (op scope), the others through _evaluate_plain, whose _judge and own
    # identical-output check with its non-finite count (both counted below) are taken out
    "both modes (the check itself; op scope on measured inputs)": (
        ("campaign.py", "run_mode", 1), ("campaign.py", "_evaluate_plain", 1), ("campaign.py", "_judge", -1),
        ("campaign.py", "_has_nonfinite", -1, "_evaluate_plain"),
        ("campaign.py", "_identical_leaf", -1, "_evaluate_plain")),
    # identical outputs are told apart in _evaluate_plain (_identical_leaf) or _judge (identical_outputs), others
    # compared in full (_compared)
    "comparison": (("campaign.py", "identical_outputs", 1), ("campaign.py", "_identical_leaf", 1, "_evaluate_plain"),
                   ("campaign.py", "_compared", 1)),
    "non-finite count": (("campaign.py", "_has_nonfinite", 1),),
    "coverage (measure, features, index)": (("selector.py", "observe", 1), ("selector.py", "measures", 1)),
    "progress record (the worker's mmap write)": (("worker_main.py", "encoded", 1), ("worker_main.py", "write", 1)),
}


def profile_one_execution(executions: int = 3000) -> dict[str, float]:
    """cProfile (CPU time) of the campaign loop a worker runs, with the worker's own progress file: sigmoid on
    8x8, eager vs jit.trace; microseconds per execution by stage, `other` being the loop's own bookkeeping.
    The pool adds one request and one answer per harness (not per input), measured by pool vs in-process."""
    import cProfile
    import pstats

    from fuzz_core.campaign import Campaign
    from fuzz_core.cgf.selector import CoverageSelector
    from fuzz_core.worker_main import ProgressFile, RunProgress

    fd = os.open(tempfile.mkstemp(prefix="tf_bench_progress_")[1], os.O_RDWR)
    progress = ProgressFile(fd)

    def campaign() -> Campaign:
        c = Campaign(harness("torch.sigmoid", "jit.trace"), selector=CoverageSelector(), instrument="op",
                     progress=RunProgress(progress, 1))  # as the worker records its inputs
        c.prepare()
        return c

    campaign().run(budget_s=None, max_executions=200)  # warm: the trace, lazy imports
    c = campaign()
    started = time.process_time()
    c.run(budget_s=None, max_executions=executions)
    unprofiled = (time.process_time() - started) / executions * 1e6
    c = campaign()
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    c.run(budget_s=None, max_executions=executions)
    profiler.disable()
    os.close(fd)
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]

    def cumulative(file: str, name: str, sign: int = 1, caller: str | None = None) -> float:
        """`sign` times the cumulative time of `name` in `file`, over its calls from `caller` where one is named."""
        rows = [v for k, v in stats.items() if k[2] == name and k[0].endswith(file)]
        if caller is None:
            return sign * sum(v[3] for v in rows)
        return sign * sum(timing[3] for v in rows for where, timing in v[4].items() if where[2] == caller)

    total = cumulative("campaign.py", "run")
    out = {stage: sum(cumulative(*entry) for entry in entries) / executions * 1e6
           for stage, entries in STAGES.items()}
    out["other (loop bookkeeping)"] = total / executions * 1e6 - sum(out.values())
    out["total under the profiler"] = total / executions * 1e6
    out["total without the profiler"] = unprofiled
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="budget per row, op and mode pair")
    parser.add_argument("--compile-seconds", type=float, default=20.0,
                        help="budget per row for compile:inductor (its first compilation alone takes seconds)")
    parser.add_argument("--programs", type=int, default=3, help="fresh-process programs per mode pair")
    parser.add_argument("--profile", action="store_true", help="also print one execution's time by stage")
    args = parser.parse_args()
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="tf_bench_inductor_")  # fresh, as a pool's
    import torch

    from fuzz_core.workers import WorkerPool

    torch.set_num_threads(1)  # every row single thread; the pool's worker runs with threads=1 by default
    load_before = load_average()
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} "
          f"({os.cpu_count()} CPUs); torch {torch.__version__}", flush=True)
    figures: dict[str, dict[str, Any]] = {}
    # Every side warm (torch, OpInfo, inductor imported): this process and the pool's worker each run a short
    # harness of another op in both modes first, so no row pays the first imports (inductor's are seconds).
    from fuzz_core import run_harness
    from fuzz_core.inputs.opinfo import op_db

    op_db()
    warm = [harness("torch.neg", test_mode) for _reference, test_mode in PAIRS]
    for spec in warm:
        run_harness(spec, max_executions=5, workdir=tempfile.mkdtemp(prefix="tf_bench_"))
    # The values-only row gets a pool of its own: a worker keeps what it compiled, and neither row may run on
    # code the other one compiled.
    with WorkerPool(1, workdir=tempfile.mkdtemp(prefix="tf_bench_pool_")) as pool, \
            WorkerPool(1, workdir=tempfile.mkdtemp(prefix="tf_bench_pool_values_")) as values_pool:
        for each in (pool, values_pool):
            each.warm()
            for spec in warm:
                each.submit(spec, max_executions=5).result()
        for reference, test_mode in PAIRS:
            rows: dict[str, list[dict[str, float]]] = {"pool": [], "pool_values": [], "hand_loop": [],
                                                       "in_process": [], "retrace": []}
            seconds = args.compile_seconds if test_mode.startswith("compile") else args.seconds
            for op in OPS:
                rows["pool"].append(pool_rate(pool, op, test_mode, seconds))
                rows["pool_values"].append(pool_rate(values_pool, op, test_mode, seconds, mutate="values"))
                rows["hand_loop"].append(hand_loop(op, test_mode, seconds))  # before in-process: its own compile
                rows["in_process"].append(in_process_rate(op, test_mode, seconds))
                if test_mode == "jit.trace":
                    rows["retrace"].append(hand_loop(op, test_mode, seconds, retrace=True))
                line = ", ".join(f"{name} {values[-1]['per_s']:.0f}/s (steady {values[-1]['steady_per_s']:.0f}/s)"
                                 for name, values in rows.items() if values)
                print(f"  {op} {reference} vs {test_mode}: {line}", flush=True)
            fresh = fresh_process_rate(test_mode, args.programs)
            pair: dict[str, Any] = {name: round(geomean([r["per_s"] for r in values]), 1)
                                    for name, values in rows.items() if values}
            pair.update({f"{name}_steady": round(geomean([r["steady_per_s"] for r in values]), 1)
                         for name, values in rows.items() if values})
            pair["steady_pool_vs_hand_loop"] = round(pair["pool_steady"] / pair["hand_loop_steady"], 3)
            pair["fresh_process"] = round(fresh["per_s"], 3)
            pair["pool_vs_hand_loop"] = round(pair["pool"] / pair["hand_loop"], 3)
            pair["pool_values_vs_hand_loop"] = round(pair["pool_values"] / pair["hand_loop"], 3)
            pair["steady_pool_values_vs_hand_loop"] = round(pair["pool_values_steady"] / pair["hand_loop_steady"], 3)
            pair["pool_vs_in_process"] = round(pair["pool"] / pair["in_process"], 3)
            pair["pool_vs_fresh_process"] = round(pair["pool"] / pair["fresh_process"], 1)
            if "retrace" in pair:
                pair["pool_vs_retrace"] = round(pair["pool"] / pair["retrace"], 3)
            pair["pool_compile_s"] = round(sum(r.get("compile_s", 0.0) for r in rows["pool"]), 2)
            pair["pool_values_compile_s"] = round(sum(r.get("compile_s", 0.0) for r in rows["pool_values"]), 2)
            figures[f"{reference}_vs_{test_mode}"] = pair
            print(f"{reference} vs {test_mode} (geometric mean over {len(OPS)} ops, checks/s): "
                  f"pool {pair['pool']}; pool, values only {pair['pool_values']}; in-process {pair['in_process']}; hand loop {pair['hand_loop']}"
                  + (f"; re-trace per input {pair['retrace']}" if "retrace" in pair else "")
                  + f"; fresh process {pair['fresh_process']} ({fresh['seconds'] / fresh['executions']:.2f} s each)"
                  + f"; steady: pool {pair['pool_steady']}, hand loop {pair['hand_loop_steady']}"
                  + f" | pool/hand loop {pair['pool_vs_hand_loop']}x all-in, {pair['steady_pool_vs_hand_loop']}x "
                  f"steady (target 0.5x); values only: pool/hand loop {pair['pool_values_vs_hand_loop']}x all-in, "
                  f"{pair['steady_pool_values_vs_hand_loop']}x steady; pool/in-process "
                  f"{pair['pool_vs_in_process']}x, pool/fresh process {pair['pool_vs_fresh_process']}x", flush=True)
    profile = None
    if args.profile:
        profile = {k: round(v, 1) for k, v in profile_one_execution().items()}
        profiled = profile["total under the profiler"]
        shares = {k: v / profiled for k, v in profile.items() if not k.startswith("total")}
        print(f"one execution as a worker runs it (sigmoid, eager vs jit.trace): "
              f"{profile['total without the profiler']:.0f} CPU microseconds; by stage (share under cProfile): "
              + ", ".join(f"{k} {v:.0%}" for k, v in shares.items()), flush=True)
    load_after = load_average()
    idle = max(load_before[0], load_after[0]) < 0.5 * (os.cpu_count() or 1)
    print(f"load average after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; the machine was "
          f"{'idle enough' if idle else 'BUSY: absolute rates are low, compare the ratios'}", flush=True)
    print(json.dumps({"benchmark": "fuzz_throughput", "ops": list(OPS), "shape": list(SHAPE), "threads": 1,
                      "seconds_per_row": args.seconds, "pairs": figures, "target_pool_vs_hand_loop": 0.5,
                      "min_pool_vs_hand_loop": min(f["pool_vs_hand_loop"] for f in figures.values()),
                      "min_steady_pool_vs_hand_loop": min(f["steady_pool_vs_hand_loop"] for f in figures.values()),
                      "min_pool_values_vs_hand_loop": min(f["pool_values_vs_hand_loop"] for f in figures.values()),
                      "profile_us_per_execution": profile, "load_average_before": load_before,
                      "load_average_after": load_after, "idle": idle, "torch_version": torch.__version__}))


if __name__ == "__main__":
    main()
