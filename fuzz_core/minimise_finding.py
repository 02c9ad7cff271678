"""Minimise a confirmed finding inside its worker: shrink the saved input, save the smallest beside it, write and run the short repro.

Runs in the sandboxed worker right after the campaign that confirmed the finding (worker_main), so
the re-runs get the same isolation as fuzzing. The original input and long script are untouched;
the result goes under evidence["minimised"]. Never raises: a failure is recorded with its reason.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from fuzz_core import result as verdicts
from fuzz_core.campaign import Campaign, Finding
import torch

from fuzz_core.evidence import describe_sample, json_number
from fuzz_core.execution import execute_fp64
from fuzz_core.inputs import Sample
from fuzz_core.minimise import minimise
from fuzz_core.mutators.base import CorpusEntry
from fuzz_core.result import HarnessResult
from fuzz_core.saved_inputs import INPUTS_SUFFIX, load_inputs, save_inputs
from fuzz_core.short_repro import NoShortRepro, render_short_repro
from fuzz_core.spec import HarnessSpec
from fuzz_core.tensors import output_leaves

SHORT_REPRO_TIMEOUT_S = 180.0
_OUTPUT_TAIL = 1500


def failure_key(result: HarnessResult) -> str:
    """The campaign's key of the failure (`value:out`, `nan_inf:[0]`, ...): the signature's last field."""
    return result.signature.rsplit("|", 1)[-1]


def run_short_repro(path: Path, timeout_s: float = SHORT_REPRO_TIMEOUT_S) -> tuple[int | None, str]:
    """Run the script in a fresh interpreter (still inside this worker's sandbox); (exit code or None, output tail)."""
    try:
        done = subprocess.run([sys.executable, "-I", str(path)], cwd=str(path.parent), capture_output=True,
                              text=True, timeout=timeout_s, env=dict(os.environ), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"(killed after {timeout_s:g} s)"
    return done.returncode, (done.stdout + done.stderr)[-_OUTPUT_TAIL:]


def fp64_distance(value: torch.Tensor, fp64: torch.Tensor) -> float:
    """Largest distance from the float64 value; equal values (NaN to NaN, inf to inf) are 0, other NaN infinite.
    The short repro prints the same measure (its `err`), so report and script agree."""
    v, f = value.detach().double(), fp64.detach().double()
    same = (v == f) | (v.isnan() & f.isnan())
    return max(torch.where(same, 0.0, (v - f).abs().nan_to_num(nan=math.inf, posinf=math.inf)).flatten().tolist(), default=0.0)


def _shown(t: torch.Tensor, limit: int = 8) -> list[Any]:
    return [json_number(v) for v in t.detach().reshape(-1)[:limit].tolist()]


def measured_figures(campaign: Campaign, sample: Sample, key: str) -> dict[str, Any]:
    """Both modes' outputs and the float64 value on `sample`, each error computed for the mode it names."""
    assert campaign.reference is not None and campaign.test is not None and campaign.target is not None
    path = key.partition(":")[2] or "out"
    run = getattr(campaign, "run_mode", None) or getattr(campaign, "_run")  # named run_mode since the engine split
    ref = run(campaign.reference, sample)
    test = run(campaign.test, sample)
    fp64 = execute_fp64(campaign.target, sample, reseed=campaign.reseed)
    if "ok" != ref.status or "ok" != test.status or "ok" != fp64.status:
        return {"figures_skipped": "a mode raised on the smallest input"}
    leaves = [dict(output_leaves(run.output)).get(path) for run in (ref, test, fp64)]
    if not all(isinstance(leaf, torch.Tensor) for leaf in leaves):
        return {"figures_skipped": f"output {path!r} is not a tensor in every mode"}
    ref_leaf, test_leaf, fp64_leaf = leaves
    figures: dict[str, Any] = {"output": path, "reference_mode": campaign.reference.name,
                               "test_mode": campaign.test.name, "reference_values": _shown(ref_leaf),
                               "test_values": _shown(test_leaf), "float64_values": _shown(fp64_leaf),
                               "output_dtype": str(test_leaf.dtype).removeprefix("torch.")}
    if ref_leaf.shape == fp64_leaf.shape == test_leaf.shape and (ref_leaf.is_floating_point() or
                                                                 test_leaf.is_floating_point()):
        figures.update(reference_error_vs_fp64=json_number(fp64_distance(ref_leaf, fp64_leaf)),
                       test_error_vs_fp64=json_number(fp64_distance(test_leaf, fp64_leaf)))
    return figures


def _short_repro(spec: HarnessSpec, campaign: Campaign, sample: Sample, key: str, path: Path) -> dict[str, Any]:
    assert campaign.target is not None
    if campaign.random_op:
        return {"short_repro_skipped": "random op: the short form does not reseed the RNG"}
    attempts = (False, True) if spec.test_mode.startswith("compile:") else (False,)
    info: dict[str, Any] = {}
    for dynamic in attempts:  # the fuzzer's compiled callable may have seen other shapes (dynamic kernels)
        try:
            text = render_short_repro(spec, campaign.target, sample, key, dynamic=dynamic)
        except NoShortRepro as exc:
            return {"short_repro_skipped": str(exc)}
        path.write_text(text)
        code, output = run_short_repro(path)
        info = {"short_repro": text, "short_repro_path": str(path), "short_repro_exit": code,
                "short_repro_output": output, "short_repro_lines": text.count("\n")}
        if code == 1:
            return info
    info["short_repro_skipped"] = "the short form did not reproduce (exit code %s)" % info.get("short_repro_exit")
    return info


def minimise_finding(spec: HarnessSpec, result: HarnessResult, workdir: str | os.PathLike[str], *,
                     budget_s: float, max_tries: int = 400) -> dict[str, Any]:
    """evidence["minimised"] for a confirmed result: smallest input, shrink figures, short repro (or reasons)."""
    start = time.monotonic()
    inputs_path = result.evidence.get("inputs_path")
    if result.verdict != verdicts.CONFIRMED or not inputs_path:
        return {"skipped": "only confirmed findings with a saved input are minimised"}
    key = failure_key(result)
    try:
        data = load_inputs(inputs_path)
        campaign = Campaign(spec)
        campaign.prepare()
        original = campaign.canonical(Sample(tuple(data["args"]), dict(data["kwargs"]), data["ctor"], "saved"))

        def still_fails(candidate: Sample) -> bool:
            outcome = campaign.evaluate(CorpusEntry(candidate, (0, ())))
            return isinstance(outcome, Finding) and outcome.verdict == verdicts.CONFIRMED and outcome.key == key

        smallest, stats = minimise(original, still_fails, budget_s=budget_s, max_tries=max_tries,
                                   canonical=campaign.canonical)
        stem = Path(inputs_path).name.removeprefix("inputs_").removesuffix(INPUTS_SUFFIX)
        folder = Path(workdir)
        folder.mkdir(parents=True, exist_ok=True)
        minimised_path = folder / f"minimised_{stem}{INPUTS_SUFFIX}"
        save_inputs(smallest, str(minimised_path))
        info: dict[str, Any] = {"failure_key": key, "inputs_path": str(minimised_path),
                                "input": describe_sample(smallest), "shrink": stats.to_dict()}
        info["figures"] = measured_figures(campaign, smallest, key)
        info.update(_short_repro(spec, campaign, smallest, key, folder / f"short_repro_{stem}.py"))
    except Exception as exc:  # recorded with its reason; the confirmed finding stands as it was
        return {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-1500:]}
    info["elapsed_s"] = round(time.monotonic() - start, 3)
    return info
