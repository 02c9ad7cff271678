"""Executions/s with 1 and 2 workers on the local sandboxed pool and on a local Ray instance, in one run.

Each executor first runs one short warm-up harness per worker (torch imported, sandbox up), then the same
batch of harnesses, each with the same per-harness budget; executions/s = inputs executed / batch wall time.
Prints the scaling ratio 2 vs 1 worker for each executor, Ray's overhead against the pool at equal workers,
and harnesses/hour per core at this per-harness budget. It states whether the machine was idle: the 1-minute
load average before and after, against the CPU count (a 1 -> 2 worker ratio means little when other processes
already hold the cores: two workers cannot scale on cores that are not free). Last line: one JSON object.

    .venv/bin/python benchmarks/scaling.py [--harnesses 6] [--budget 3]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from concurrent.futures import wait
from typing import Any, Callable

from agent.campaign.executors import executor_factory
from fuzz_core.spec import HarnessSpec

INPUTS = {"args": [{"kind": "tensor", "tensor": {"shape": [8, 16]}}]}
APIS = ["torch.relu", "torch.tanh", "torch.sigmoid", "torch.abs", "torch.exp", "torch.neg"]


def specs(n: int) -> list[HarnessSpec]:
    return [HarnessSpec.from_dict({"api": APIS[i % len(APIS)], "reference_mode": "eager",
                                   "test_mode": "layout:noncontiguous", "input_source": "described",
                                   "inputs": INPUTS, "seed": i, "kind": "Layout_Mismatch"}) for i in range(n)]


def measure(factory: Callable[..., Any], workers: int, batch: list[HarnessSpec], budget_s: float) -> dict[str, float]:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tf_scaling_") as workdir:
        with factory(workers, task_timeout_s=60, memory_limit_mb=4096, workdir=workdir, sandbox=True,
                     instrument="op") as executor:
            wait([executor.submit(spec, budget_s=0.3) for spec in batch[:workers]])  # warm every worker
            warm_s = time.monotonic() - started
            t0 = time.monotonic()
            results = [f.result() for f in [executor.submit(spec, budget_s=budget_s) for spec in batch]]
            wall = time.monotonic() - t0
    executions = sum(r.executions for r in results)
    return {"executions_per_s": round(executions / wall, 1), "wall_s": round(wall, 2), "startup_s": round(warm_s, 2),
            "harnesses_per_hour_per_core": round(len(results) / wall * 3600 / workers, 1),
            "verdicts": sorted({r.verdict for r in results})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--harnesses", type=int, default=6)
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per harness")
    args = parser.parse_args()
    import ray

    batch = specs(args.harnesses)
    cpus = os.cpu_count() or 1
    load_before = os.getloadavg()
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} on {cpus} CPUs",
          flush=True)
    figures: dict[str, Any] = {}
    local = executor_factory("local", preload_opinfo=False)
    for workers in (1, 2):
        figures[f"local_{workers}"] = measure(local, workers, batch, args.budget)
        print(f"local pool, {workers} worker(s): {figures[f'local_{workers}']}", flush=True)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        on_ray = executor_factory("ray", preload_opinfo=False)
        for workers in (1, 2):
            figures[f"ray_{workers}"] = measure(on_ray, workers, batch, args.budget)
            print(f"local Ray, {workers} actor(s): {figures[f'ray_{workers}']}", flush=True)
    finally:
        ray.shutdown()
    load_after = os.getloadavg()
    # Idle: before and after, the other processes left at least the two cores this benchmark uses (load < CPUs - 2,
    # or under half the CPUs on a machine with fewer than four).
    busiest = max(load_before[0], load_after[0])
    idle = busiest < max(cpus - 2, cpus / 2)
    eps = {name: value["executions_per_s"] for name, value in figures.items()}
    print(f"load average after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; the machine was "
          f"{'idle' if idle else 'BUSY (other processes held the cores): the scaling ratios understate'}; "
          f"1 -> 2 workers: local pool {eps['local_2'] / eps['local_1']:.2f}x, Ray {eps['ray_2'] / eps['ray_1']:.2f}x",
          flush=True)
    summary = {
        "harnesses": args.harnesses, "budget_s": args.budget,
        **{f"{name}_executions_per_s": value for name, value in eps.items()},
        "local_scaling_2_vs_1": round(eps["local_2"] / eps["local_1"], 3),
        "ray_scaling_2_vs_1": round(eps["ray_2"] / eps["ray_1"], 3),
        "ray_vs_pool_at_2": round(eps["ray_2"] / eps["local_2"], 3),
        "ray_vs_pool_at_1": round(eps["ray_1"] / eps["local_1"], 3),
        "harnesses_per_hour_per_core_local_2": figures["local_2"]["harnesses_per_hour_per_core"],
        "harnesses_per_hour_per_core_ray_2": figures["ray_2"]["harnesses_per_hour_per_core"],
        "startup_s": {name: value["startup_s"] for name, value in figures.items()},
        "cpus": cpus, "load_average_before": load_before, "load_average_after": load_after, "idle": idle,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
