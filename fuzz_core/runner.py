"""Run one harness in the current process (workers call this) and turn the campaign into a HarnessResult."""

from __future__ import annotations

import gc
import os
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from fuzz_core import result as V
from fuzz_core.campaign import Campaign, Finding, HarnessBroken
from fuzz_core.evidence import Evidence, backend_ablation, config_flags, describe_sample
from fuzz_core.inputs import NoInputs, Sample
from fuzz_core.modes import NotApplicable
from fuzz_core.mutators import CorpusSelector, Mutator
from fuzz_core.repro import UnsavableInput, render_repro, save_inputs
from fuzz_core.result import HarnessResult
from fuzz_core.saved_inputs import INPUTS_SUFFIX
from fuzz_core.saved_outputs import finding_outputs_evidence
from fuzz_core.spec import HarnessSpec


def signature_for(spec: HarnessSpec, location: str) -> str:
    kind = spec.kind or spec.oracle
    return f"{spec.api}|{spec.reference_mode}->{spec.test_mode}|{kind}|{location}"


DEFAULT_INSTRUMENT = "op"  # pipeline harnesses: op-level coverage while fuzzing, localisation on a finding


def _base_evidence(spec: HarnessSpec, campaign: Campaign | None) -> Evidence:
    evidence = Evidence(torch_version=torch.__version__, config=config_flags(),
                        modes=[spec.reference_mode, spec.test_mode], dtype=spec.dtype)
    evidence.extra["seed"] = spec.seed  # later rounds move the seed on: a recipe replays with this one
    if campaign is not None:
        tally = campaign.tally
        evidence.update(dict(
            input_source=campaign.source, random_op=campaign.random_op, seeds=len(campaign.seeds),
            executions=tally.executions, compared=tally.compared,  # Note [Earned passes] in fuzz_core/campaign.py
            passed=tally.passed, invalid_inputs=tally.invalid_input, not_applicable_inputs=tally.not_applicable,
            fp64_accepted=tally.fp64_accepted, rounding_accepted=tally.rounding_accepted,
            notes=sorted(tally.notes)[:10], compile_s=round(tally.compile_s, 3), execute_s=round(tally.execute_s, 3),
            compiles=tally.compiles, closeness=round(tally.closeness, 4), nonfinite_outputs=tally.nonfinite_outputs,
            instrument=campaign.instrument,
        ))
        if tally.mutator_errors:  # Note [Mutators that raise] in fuzz_core/campaign.py
            evidence.extra["mutator_errors"] = dict(tally.mutator_errors.most_common(10))
        compiled = campaign.compiled_evidence()
        if compiled is not None:
            evidence.update({"compiled": compiled})  # Note [Proof of compilation] in fuzz_core/modes/compile.py
        stats = getattr(campaign.selector, "stats", None)
        if callable(stats):
            evidence.coverage = stats()
        if campaign.test is not None:
            evidence.config.update({f"mode.{k}": v for k, v in campaign.test.config().items()})
    return evidence


def localisation_evidence(campaign: Campaign, sample: Sample) -> dict[str, Any]:
    """Where the divergence starts: first diverging ATen op, or for compile the backend bisection; at
    module/kernel level also the recorder's trace of the test mode. Failure is recorded, never raised."""
    from fuzz_core.instrument.levels import run_instrumented
    from fuzz_core.localise import localise_modes
    from fuzz_core.modes.base import bound_callable
    from fuzz_core.tensors import clone_tree

    assert campaign.target is not None and campaign.reference is not None and campaign.test is not None
    out: dict[str, Any] = {}
    try:
        out.update(localise_modes(campaign.reference, campaign.test, campaign.target, sample))
    except Exception as exc:  # localisation is evidence, not a verdict: say why it is missing
        out["localisation_error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    if "backend_bisection" not in out and out.get("first_divergent_op") is None and "localisation_error" not in out:
        out["localisation_error"] = "no aligned ATen op differs (the modes run different op sequences)"
    if campaign.instrument in ("module", "kernel"):
        target, test = campaign.target, campaign.test
        model = bound_callable(target, sample) if target.is_module_class else None

        def run_test() -> Any:
            args, kwargs = clone_tree(sample.tree())
            with torch.no_grad():
                return test.run(target, Sample(tuple(args), dict(kwargs), sample.ctor, sample.origin))

        try:
            _, report = run_instrumented(run_test, (), campaign.instrument,
                                         model if isinstance(model, torch.nn.Module) else None)
            out["instrumentation"] = report.to_dict(max_records=50)
        except Exception as exc:
            out["instrumentation"] = {"level": campaign.instrument, "error": f"{type(exc).__name__}: {exc}"[:300]}
    return out


def _write_artifacts(spec: HarnessSpec, campaign: Campaign, sample: Sample, workdir: Path, summary: str,
                     signature: str) -> dict[str, str]:
    """Save the input (safetensors) and the repro script; the evidence paths, or why there is no repro."""
    assert campaign.target and campaign.reference and campaign.test
    stem = f"{spec.spec_id}_{abs(hash(signature)) % 10**8:08d}"
    inputs_path = workdir / f"inputs_{stem}{INPUTS_SUFFIX}"
    repro_path = workdir / f"repro_{stem}.py"
    harness_path = workdir / f"harness_{stem}.py" if campaign.target.code else None
    try:
        save_inputs(sample, str(inputs_path))
        repro = render_repro(spec, campaign.target, campaign.reference, campaign.test, sample, str(inputs_path),
                             random_op=campaign.random_op, summary=summary,
                             harness_path=str(harness_path) if harness_path else None)
    except (UnsavableInput, ValueError) as exc:
        return {"repro": "", "repro_skipped": f"no repro: {exc}"}
    paths = {"repro": repro, "inputs_path": str(inputs_path), "repro_path": str(repro_path)}
    if harness_path is not None:
        harness_path.write_text(campaign.target.code or "")
        paths["harness_path"] = str(harness_path)
    repro_path.write_text(repro)
    return paths


def mismatch_evidence(finding: Finding) -> dict[str, Any]:
    """The evidence keys a Finding itself gives: its mismatch's figures and its details (the checks among them)."""
    out: dict[str, Any] = {}
    mismatch = finding.mismatch
    if mismatch is not None:
        out.update(
            location=mismatch.path, mismatch_kind=mismatch.kind, detail=mismatch.detail,
            max_abs_diff=mismatch.max_abs_diff, max_rel_diff=mismatch.max_rel_diff,
            mismatch_count=mismatch.mismatch_count, first_index=mismatch.first_index,
            tolerance={"rtol": mismatch.rtol, "atol": mismatch.atol},
        )
        if mismatch.shape is not None:
            out["output_shape"] = mismatch.shape
    out.update(finding.details)
    return out


def result_for_finding(spec: HarnessSpec, campaign: Campaign, finding: Finding, workdir: Path,
                       elapsed: float) -> HarnessResult:
    evidence = _base_evidence(spec, campaign)
    mismatch = finding.mismatch
    location = finding.key
    evidence.update(mismatch_evidence(finding))
    evidence.input = describe_sample(finding.entry.sample)
    evidence.recipe = {"seed_index": finding.entry.recipe[0], "steps": [list(s) for s in finding.entry.recipe[1]]}
    if finding.verdict == V.CONFIRMED and spec.test_mode.startswith("compile:") and campaign.target is not None:
        evidence.backend_ablation = backend_ablation(campaign.target, finding.entry.sample, spec.mode_options,
                                                     campaign.reseed, spec.test_mode)
    if finding.verdict == V.CONFIRMED and campaign.instrument != "none":
        evidence.update(localisation_evidence(campaign, finding.entry.sample))
    signature = signature_for(spec, location)
    artifacts = _write_artifacts(spec, campaign, finding.entry.sample, workdir, finding.reason, signature)
    repro = artifacts.pop("repro")
    evidence.update(artifacts)
    inputs_path = artifacts.get("inputs_path")
    if mismatch is not None and finding.verdict in (V.CONFIRMED, V.SUSPICIOUS) and inputs_path:
        outputs_path = Path(inputs_path).with_name("outputs_" + Path(inputs_path).name.removeprefix("inputs_"))
        evidence.update(finding_outputs_evidence(campaign, finding.entry.sample, mismatch.path, outputs_path))
    return HarnessResult(finding.verdict, finding.reason, campaign.tally.executions, elapsed, evidence.to_dict(),
                         repro, signature, spec.spec_id, campaign.exit_reason)


def run_harness(spec: HarnessSpec, *, budget_s: float | None = None, max_executions: int | None = None,
                workdir: str | os.PathLike[str] | None = None,
                progress: Callable[[dict[str, Any]], None] | None = None,
                campaign_hook: Callable[[Campaign], None] | None = None,
                selector: CorpusSelector | None = None,
                mutators: Sequence[Mutator] | None = None, instrument: str = DEFAULT_INSTRUMENT,
                min_inputs: int = 0) -> HarnessResult:
    """Fuzz one harness in this process and return its verdict with evidence (never raises for target bugs).

    `selector` and `mutators` are the plug-in seams; without a selector the harness is coverage-guided
    (CoverageSelector: output features, plus op-level coverage at instrument level op or kernel).
    `instrument` (none|module|op|kernel) also decides the localisation a confirmed finding carries.
    `min_inputs`: the compared inputs a pass needs (fewer: `inconclusive`); the loop may run briefly past its
    budget to reach them. A run that compared no input is `not_applicable` with the reason (Note [Earned passes]).
    """
    try:
        return _run_harness(spec, budget_s=budget_s, max_executions=max_executions, workdir=workdir,
                            progress=progress, campaign_hook=campaign_hook, selector=selector, mutators=mutators,
                            instrument=instrument, min_inputs=min_inputs)
    finally:
        gc.unfreeze()  # Note [Compiled objects and the collector] (fuzz_core/campaign.py)


def _run_harness(spec: HarnessSpec, *, budget_s: float | None, max_executions: int | None,
                 workdir: str | os.PathLike[str] | None,
                 progress: Callable[[dict[str, Any]], None] | None,
                 campaign_hook: Callable[[Campaign], None] | None,
                 selector: CorpusSelector | None,
                 mutators: Sequence[Mutator] | None, instrument: str, min_inputs: int) -> HarnessResult:
    from fuzz_core.cgf.selector import CoverageSelector
    from fuzz_core.instrument.levels import check_level

    check_level(instrument)
    start = time.monotonic()
    budget_s = budget_s if budget_s is not None else spec.budget_s
    max_executions = max_executions if max_executions is not None else spec.max_executions
    work = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="transfuzz_"))
    work.mkdir(parents=True, exist_ok=True)
    campaign = Campaign(spec, progress=progress, selector=selector if selector is not None else CoverageSelector(),
                        mutators=mutators, instrument=instrument)
    if campaign_hook is not None:
        campaign_hook(campaign)

    def done(verdict: str, reason: str, **extra: Any) -> HarnessResult:
        evidence = _base_evidence(spec, campaign if campaign.target is not None else None)
        evidence.update(extra)
        return HarnessResult(verdict, reason, campaign.tally.executions, time.monotonic() - start,
                             evidence.to_dict(), "",
                             signature_for(spec, verdict), spec.spec_id, campaign.exit_reason or verdict)

    try:
        campaign.prepare()
    except HarnessBroken as exc:
        return done(V.ERROR, f"harness broken: {exc}")
    except (NoInputs, NotApplicable) as exc:
        return done(V.NOT_APPLICABLE, str(exc))
    except Exception as exc:
        return done(V.ERROR, f"harness setup failed: {type(exc).__name__}: {exc}",
                    traceback=traceback.format_exc()[-2000:])
    try:
        campaign.run(budget_s=budget_s, max_executions=max_executions, min_inputs=min_inputs)
    except Exception as exc:  # a bug in the engine itself: keep it apart from target findings
        return done(V.ERROR, f"engine error: {type(exc).__name__}: {exc}", traceback=traceback.format_exc()[-3000:])
    elapsed = time.monotonic() - start
    best = campaign.best_finding()
    if best is not None:
        return result_for_finding(spec, campaign, best, work, elapsed)
    # Note [Earned passes] (fuzz_core/campaign.py): only compared inputs count towards a pass.
    tally = campaign.tally
    reasons = {key: sorted(set(values))[:5] for key, values in
               (("na_reasons", tally.na_reasons), ("invalid_reasons", tally.invalid_reasons)) if values}
    if tally.compared:
        reason = f"{tally.passed} inputs agree"
        if tally.fp64_accepted:
            reason += f" ({tally.fp64_accepted} beyond tolerance but no further from float64 than the reference)"
        if tally.rounding_accepted:
            reason += f" ({tally.rounding_accepted} within the op's low-precision rounding allowance)"
        health = tally.health_note()
        if tally.compared < min_inputs:
            return done(V.INCONCLUSIVE, f"only {tally.compared} inputs compared (a pass needs {min_inputs}) "
                        f"[{reason}; {health or tally.figures()}]", **reasons)
        if tally.health_failed():
            return done(V.INCONCLUSIVE, f"health check failed: {tally.uncompared} inputs not compared against "
                        f"{tally.compared} compared [{reason}; {health}]", **reasons)
        return done(V.PASSED, f"{reason} [{health}]" if health else reason, **reasons)
    if tally.uncompared:  # never a valid input to compare
        return done(V.NOT_APPLICABLE, tally.no_input_reason(), **reasons)
    return done(V.ERROR, f"no input was executed ({campaign.exit_reason})")


def replay_input(spec: HarnessSpec, recipe: dict[str, Any], workdir: str | os.PathLike[str]) -> dict[str, Any]:
    """Rebuild the input a recipe names (without running the target) and save it with a repro script."""
    campaign = Campaign(spec)
    campaign.prepare()
    sample = campaign.replay(recipe)
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    signature = signature_for(spec, "crash")
    artifacts = _write_artifacts(spec, campaign, sample, work, "the worker died on this input", signature)
    return {**artifacts, "input": describe_sample(sample)}
