"""Minimise a confirmed finding inside its worker: shrink the saved input, save the smallest beside it, write and run the short repro,
and make the smallest input the finding's one input.

Runs in the sandboxed worker right after the campaign that confirmed the finding (worker_main), so
the re-runs get the same isolation as fuzzing. The original input and long script are untouched on
disk; the shrink goes under evidence["minimised"]. Never raises: a failure is recorded with its reason.

Note [One input per finding]
A finding shows one input. Once the smallest failing input is known, the campaign evaluates it again and
that Finding becomes the finding: its reason, mismatch figures (max_abs_diff, first_index in the
output's coordinates, errors against float64), recorded checks, saved input, long repro, saved outputs
(the review page's plot), backend ablation and localisation are all measured on the smallest input.
What the fuzzer first found (its reason and every input-specific key, FINDING_FIELDS plus the Finding's
details) is kept under evidence["original"]; campaign-level keys stay where they are. When the smallest
input does not confirm again, nothing is adopted and evidence["minimised"]["adopt_skipped"] says why.
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

from fuzz_core.evidence import FINDING_FIELDS, Evidence, backend_ablation, describe_sample, json_number
from fuzz_core.execution import execute_fp64
from fuzz_core.inputs import Sample
from fuzz_core.minimise import minimise
from fuzz_core.mutators.base import CorpusEntry
from fuzz_core.result import HarnessResult
from fuzz_core.repro import UnsavableInput, render_repro
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


class _Shrunk:
    """What adopting the smallest input needs from the shrink."""

    def __init__(self, campaign: Campaign, smallest: Sample, inputs_path: Path, key: str, stem: str,
                 original: Finding | None) -> None:
        self.campaign, self.smallest, self.inputs_path, self.key = campaign, smallest, inputs_path, key
        self.stem, self.original = stem, original


def _shrink(spec: HarnessSpec, result: HarnessResult, workdir: str | os.PathLike[str], budget_s: float,
            max_tries: int) -> tuple[dict[str, Any], _Shrunk | None]:
    """evidence["minimised"] for a confirmed result, and what adoption needs (None when there was no shrink)."""
    inputs_path = result.evidence.get("inputs_path")
    if result.verdict != verdicts.CONFIRMED or not inputs_path:
        return {"skipped": "only confirmed findings with a saved input are minimised"}, None
    key = failure_key(result)
    try:
        data = load_inputs(inputs_path)
        campaign = Campaign(spec)
        campaign.prepare()
        original = campaign.canonical(Sample(tuple(data["args"]), dict(data["kwargs"]), data["ctor"], "saved"))
        again = campaign.evaluate(CorpusEntry(original, (0, ())))  # its details name the input-specific keys

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
        return {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-1500:]}, None
    return info, _Shrunk(campaign, smallest, minimised_path, key, stem, again if isinstance(again, Finding) else None)


def minimise_finding(spec: HarnessSpec, result: HarnessResult, workdir: str | os.PathLike[str], *,
                     budget_s: float, max_tries: int = 400) -> dict[str, Any]:
    """evidence["minimised"] for a confirmed result: smallest input, shrink figures, short repro (or reasons).
    Adopts nothing: minimise_result also makes the smallest input the finding's one input."""
    start = time.monotonic()
    info, _ = _shrink(spec, result, workdir, budget_s, max_tries)
    info["elapsed_s"] = round(time.monotonic() - start, 3)
    return info


def minimise_result(spec: HarnessSpec, result: HarnessResult, workdir: str | os.PathLike[str], *,
                    budget_s: float, max_tries: int = 400) -> HarnessResult:
    """Shrink a confirmed result's input and make the smallest one the finding's input (Note [One input per
    finding]); evidence["minimised"] says what the shrink did, evidence["original"] keeps what was first found."""
    start = time.monotonic()
    info, shrunk = _shrink(spec, result, workdir, budget_s, max_tries)
    if shrunk is not None:
        try:
            info.update(adopt_smallest(spec, result, shrunk, Path(workdir)))
        except Exception as exc:  # recorded with its reason; the finding stays on its original input
            info["adopt_skipped"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    info["elapsed_s"] = round(time.monotonic() - start, 3)
    result.evidence["minimised"] = info
    return result


def adopt_smallest(spec: HarnessSpec, result: HarnessResult, shrunk: _Shrunk, folder: Path) -> dict[str, Any]:
    """Evaluate the smallest input again and make that Finding the result's (Note [One input per finding]).
    Changes `result` in place; returns what goes into evidence["minimised"] about the adoption."""
    from fuzz_core.runner import localisation_evidence, mismatch_evidence
    from fuzz_core.saved_outputs import finding_outputs_evidence

    campaign, smallest = shrunk.campaign, shrunk.smallest
    assert campaign.target is not None and campaign.reference is not None and campaign.test is not None
    finding = campaign.evaluate(CorpusEntry(smallest, (0, ())))
    if not (isinstance(finding, Finding) and finding.verdict == verdicts.CONFIRMED and finding.key == shrunk.key):
        outcome = finding.verdict if isinstance(finding, Finding) else finding
        return {"adopt_skipped": f"the smallest input did not confirm {shrunk.key} again ({outcome}); the finding "
                                 "stays on the original input"}
    old = result.evidence
    fresh: dict[str, Any] = dict(mismatch_evidence(finding))
    fresh["input"] = describe_sample(smallest)
    fresh["inputs_path"] = str(shrunk.inputs_path)
    if old.get("harness_path"):
        fresh["harness_path"] = old["harness_path"]
    if "backend_ablation" in old:
        fresh["backend_ablation"] = backend_ablation(campaign.target, smallest, spec.mode_options, campaign.reseed,
                                                     spec.test_mode)
    if any(k in old for k in ("first_divergent_op", "backend_bisection", "instrumentation", "localisation_error")):
        campaign.instrument = str(old.get("instrument") or "op")
        fresh.update(localisation_evidence(campaign, smallest))
    repro = ""
    try:
        repro = render_repro(spec, campaign.target, campaign.reference, campaign.test, smallest,
                             str(shrunk.inputs_path), random_op=campaign.random_op, summary=finding.reason,
                             harness_path=old.get("harness_path"))
        repro_path = folder / f"repro_minimised_{shrunk.stem}.py"
        repro_path.write_text(repro)
        fresh["repro_path"] = str(repro_path)
    except (UnsavableInput, ValueError) as exc:
        fresh["repro_skipped"] = f"no repro: {exc}"
    if finding.mismatch is not None:
        outputs_path = folder / f"outputs_minimised_{shrunk.stem}{INPUTS_SUFFIX}"
        fresh.update(finding_outputs_evidence(campaign, smallest, finding.mismatch.path, outputs_path))
    typed = Evidence()
    typed.update(fresh)
    fresh = {k: v for k, v in typed.to_dict().items() if k in fresh}  # JSON-ready, as the worker answers
    own = set(FINDING_FIELDS) | set(fresh) | (set(shrunk.original.details) if shrunk.original else set())
    original = {k: v for k, v in old.items() if k in own}
    original["reason"] = result.reason
    result.evidence = {**{k: v for k, v in old.items() if k not in own}, **fresh, "original": original}
    result.reason = finding.reason
    if repro:
        result.repro = repro
    return {"adopted": True}
