"""Benchmark: finding yield of the whole pipeline at a fixed budget, old scheduler vs new, in one run.

Runs `transfuzz run examples/sample_issues.json --budget B` twice, each on its own fresh SQLite
database and artifacts folder: once with `--scheduler even` (every harness the same share: the old
rule) and once with `--scheduler halving` (probe, then successive halving by signal). Both runs use
the same engine (compile once / run many, coverage guidance, confirmation checks) and the same
`--min-inputs`, so the difference is the budget split.

Figures per run: distinct root causes confirmed (test mode, dtype, mismatch kind, and the review's locus:
first diverging ATen op, else the API's op family, std folded onto var), how many of them are transferred (found on a target API, not the source issue's own re-check),
inconclusive verdicts (passes on fewer than --min-inputs inputs), every verdict count, and executed
inputs per compile harness (test mode compile:*: median, mean, min, and inputs per harness-minute).
The machine is shared: the load average at the start and end of each run is printed with it.
Last line: one JSON object.

    .venv/bin/python benchmarks/transfer_yield.py --budget 3m
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def run_pipeline(scheduler: str, budget: str, min_inputs: int, folder: Path, extra: list[str]) -> dict[str, Any]:
    db = folder / f"{scheduler}.db"
    artifacts = folder / f"artifacts_{scheduler}"
    env = {**os.environ, "TRANSFUZZ_ARTIFACTS_DIR": str(artifacts)}
    command = [str(ROOT / ".venv/bin/transfuzz"), "--db", f"sqlite:///{db}", "--json", "run",
               str(ROOT / "examples/sample_issues.json"), "--budget", budget, "--scheduler", scheduler,
               "--min-inputs", str(min_inputs), *extra]
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    elapsed = time.monotonic() - started
    if done.returncode not in (0, 1):
        sys.stderr.write(done.stderr[-3000:])
        raise SystemExit(f"{scheduler} run failed with exit code {done.returncode}")
    figures = yield_figures(db)
    figures.update(scheduler=scheduler, wall_s=round(elapsed, 1), load_before=round(load_before, 2),
                   load_after=round(os.getloadavg()[0], 2))
    return figures


def yield_figures(db_path: Path) -> dict[str, Any]:
    """Figures read with plain SQL, so the benchmark does not depend on the ORM's current columns."""
    from agent.review.grouping import op_family

    confirmed: dict[tuple, dict[str, Any]] = {}
    verdicts: dict[str, int] = {}
    compile_inputs: list[int] = []
    compile_minutes = 0.0
    with sqlite3.connect(db_path) as connection:
        rows = connection.execute(
            "select f.verdict, f.reason, f.evidence, h.spec, c.target_api, c.status from findings f "
            "join harnesses h on h.id = f.harness_id join candidates c on c.id = h.candidate_id").fetchall()
    for verdict, reason, evidence, spec_json, target_api, candidate_status in rows:
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
        spec = json.loads(spec_json or "{}")
        ev = json.loads(evidence or "{}")
        if str(spec.get("test_mode", "")).startswith("compile:") and verdict not in ("not_applicable", "error"):
            compile_inputs.append(int(ev.get("executions_total") or 0))
            compile_minutes += float(ev.get("elapsed_s_total") or 0) / 60
        if verdict != "confirmed":
            continue
        # The review's root-cause rule (agent/review/grouping.py): symptom plus where the divergence starts,
        # the first diverging ATen op when localised, else the op family (std folds onto var).
        op = (ev.get("first_divergent_op") or {}).get("name")
        locus = op.rsplit(".", 1)[0] if op else op_family(target_api)
        key = (spec.get("test_mode"), ev.get("dtype") or spec.get("dtype"), ev.get("mismatch_kind") or spec.get("oracle"),
               locus)
        entry = confirmed.setdefault(key, {"locus": locus, "apis": [], "test_mode": key[0], "dtype": key[1],
                                           "kind": key[2],
                                           "transferred": False, "source_recheck": False,
                                           "max_abs_diff": ev.get("max_abs_diff"), "reason": reason[:200],
                                           "first_divergent_op": (ev.get("first_divergent_op") or {}).get("name"),
                                           "first_bad_backend": (ev.get("backend_bisection") or {}).get(
                                               "first_bad_backend")})
        if target_api not in entry["apis"]:
            entry["apis"].append(target_api)
        if candidate_status == "source":
            entry["source_recheck"] = True
        else:
            entry["transferred"] = True
    compile_inputs.sort()
    return {
        "root_causes_confirmed": len(confirmed),
        "transferred": sum(1 for c in confirmed.values() if c["transferred"] and not c["source_recheck"]),
        "inconclusive": verdicts.get("inconclusive", 0),
        "verdicts": verdicts,
        "compile_harnesses": len(compile_inputs),
        "compile_inputs_median": statistics.median(compile_inputs) if compile_inputs else 0,
        "compile_inputs_mean": round(statistics.mean(compile_inputs), 1) if compile_inputs else 0,
        "compile_inputs_min": compile_inputs[0] if compile_inputs else 0,
        "compile_inputs_per_harness_minute": round(sum(compile_inputs) / compile_minutes, 1) if compile_minutes else 0,
        "confirmed": sorted(confirmed.values(), key=lambda c: (c["locus"], str(c["test_mode"]))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="3m")
    parser.add_argument("--min-inputs", type=int, default=50)
    parser.add_argument("--schedulers", default="even,halving", help="comma-separated, run in this order")
    parser.add_argument("--keep", help="keep the databases and artifacts in this folder")
    parser.add_argument("extra", nargs="*", help="further `transfuzz run` options, after --")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="transfer_yield_"))
    folder.mkdir(parents=True, exist_ok=True)
    results = {}
    for scheduler in args.schedulers.split(","):
        figures = run_pipeline(scheduler, args.budget, args.min_inputs, folder, args.extra)
        print(f"{scheduler}: {json.dumps({k: v for k, v in figures.items() if k != 'confirmed'})}", flush=True)
        for cause in figures["confirmed"]:
            print(f"  confirmed: {json.dumps(cause)}", flush=True)
        results[scheduler] = figures
    summary = {"budget": args.budget, "min_inputs": args.min_inputs, "cpus": os.cpu_count(), **{
        name: {k: v for k, v in figures.items()} for name, figures in results.items()}}
    names = list(results)
    if len(names) == 2:
        before, after = results[names[0]], results[names[1]]
        summary["delta"] = {k: (before[k], after[k]) for k in (
            "root_causes_confirmed", "transferred", "inconclusive", "compile_inputs_median")}
    print(json.dumps(summary, default=str))


if __name__ == "__main__":
    main()
