"""The campaign loop for one harness: seed inputs → mutate → run both modes → oracle → confirm; stop on budget."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch

from fuzz_core import result as V
from fuzz_core.execution import Execution, execute, execute_fp64
from fuzz_core.inputs import InputError, NoInputs, Sample
from fuzz_core.inputs.code import code_samples
from fuzz_core.inputs.described import described_samples
from fuzz_core.inputs.opinfo import find_opinfo, opinfo_samples
from fuzz_core.inputs.signature import signature_samples
from fuzz_core.inputs.triggers import apply_trigger
from fuzz_core.modes import Mode, NotApplicable, get_mode
from fuzz_core.mutators import DEFAULT_MUTATORS, CorpusEntry, CorpusSelector, Mutator, UniformSelector
from fuzz_core.oracles import amplification, compare_outputs, inputs_finite, judge_leaf, unexpected_nonfinite
from fuzz_core.oracles.compare import Comparison, Mismatch
from fuzz_core.rng import uses_rng
from fuzz_core.spec import HarnessSpec
from fuzz_core.target import Target
from fuzz_core.tensors import map_tensors, numel_total, output_leaves, tensor_leaves

# Exit reasons (why the loop stopped).
EXIT_CONFIRMED = "confirmed"
EXIT_MAX_EXECUTIONS = "max_executions"
EXIT_TIME = "time_budget"
EXIT_NOT_APPLICABLE = "not_applicable"
EXIT_NO_CORPUS = "no_mutable_input"

DEFAULT_MAX_EXECUTIONS = 200
# A perturbation at rounding level that moves the reference by this fraction of the observed
# difference means the input is ill-conditioned: the difference is amplification, not a bug.
AMPLIFICATION_FRACTION = 0.5


def _drops_nonfinite(ref: torch.Tensor, test: torch.Tensor) -> bool:
    """The test output is finite somewhere the reference is NaN/Inf (lost propagation)."""
    if not (ref.is_floating_point() and test.is_floating_point()) or ref.shape != test.shape:
        return False
    return bool((~torch.isfinite(ref) & torch.isfinite(test)).any())


def _near_overflow(sample: Sample) -> bool:
    """Some floating input is beyond sqrt(max) of its dtype: a product of two such values overflows."""
    for t in tensor_leaves(sample.tree()):
        if t.is_floating_point() and t.numel():
            finite = t[torch.isfinite(t)]
            if finite.numel() and float(finite.abs().max()) > math.sqrt(torch.finfo(t.dtype).max):
                return True
    return False


class HarnessBroken(RuntimeError):
    """The harness (not the target) is broken: verdict `error`."""


@dataclass
class Finding:
    """A failure found on one input, after the confirmation checks."""

    verdict: str
    key: str
    reason: str
    entry: CorpusEntry
    mismatch: Mismatch | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Tally:
    executions: int = 0
    passed: int = 0
    invalid_input: int = 0
    not_applicable: int = 0
    fp64_accepted: int = 0
    notes: set[str] = field(default_factory=set)
    na_reasons: list[str] = field(default_factory=list)
    invalid_reasons: list[str] = field(default_factory=list)


def _int_seed(*parts: int) -> int:
    value = 1469598103934665603
    for part in parts:
        value = ((value ^ (part & 0xFFFFFFFFFFFF)) * 1099511628211) % (1 << 63)
    return value


def build_target_for(spec: HarnessSpec) -> Target:
    from fuzz_core.target import TargetError, build_target, resolve_qualified

    op = find_opinfo(spec.api) if spec.input_source == "opinfo" and not spec.code else None
    if op is not None:
        try:
            resolved = resolve_qualified(spec.api)
        except TargetError:
            resolved = None
        if resolved is not op.op:
            # OpInfo samples follow the calling convention of OpInfo's own function variant (argument
            # order for where/embedding/einsum, Tensor methods such as .bfloat16()): call that.
            target = Target(api=spec.api, fn=op.op, short_name=spec.api.rsplit(".", 1)[-1],
                            opinfo_call=(op.name, op.variant_test_name))
            target.opinfo = op
            return target
    target = build_target(spec.api, spec.code)
    target.opinfo = op
    return target


def seed_samples(spec: HarnessSpec, target: Target) -> tuple[list[Sample], str]:
    """The seed inputs of a harness and the source they actually came from."""
    dtype = getattr(torch, spec.dtype, None)
    if not isinstance(dtype, torch.dtype):
        raise HarnessBroken(f"unknown dtype {spec.dtype!r}")
    source = spec.input_source
    if source == "code":
        samples = code_samples(target, spec.seed, spec.max_samples)
    elif source == "described":
        samples = described_samples(target, spec.input_description(), dtype, spec.seed, spec.max_samples)
    elif source == "opinfo" and target.opinfo is not None:
        samples = opinfo_samples(spec.api, dtype, spec.max_samples)
    else:
        source = "signature"
        samples = signature_samples(target, dtype, spec.seed, spec.max_samples)
    return apply_trigger(samples, spec.trigger, spec.seed, target), source


class Campaign:
    """One harness, run in the current process. `progress` is told each input's recipe before it runs."""

    def __init__(self, spec: HarnessSpec, *, selector: CorpusSelector | None = None,
                 mutators: Sequence[Mutator] | None = None,
                 progress: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.spec = spec
        self.selector: CorpusSelector = selector or UniformSelector()
        self.mutators = list(mutators or DEFAULT_MUTATORS)
        self._mutator_weights = torch.tensor([float(getattr(m, "weight", 1.0)) for m in self.mutators])
        self.progress = progress
        self.tally = Tally()
        self.findings: dict[str, Finding] = {}
        self.target: Target | None = None
        self.reference: Mode | None = None
        self.test: Mode | None = None
        self.seeds: list[Sample] = []
        self.source = spec.input_source
        self.random_op = False
        self.exit_reason = ""
        # (reference output, test output) of the last evaluated input, for CorpusSelector.observe.
        self.last_outputs: tuple[Any, Any] = (None, None)

    # -- setup ---------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Build target, modes and seed inputs; raises HarnessBroken, NoInputs or NotApplicable."""
        from fuzz_core.modes import UnknownMode
        from fuzz_core.target import TargetError

        try:
            self.reference = get_mode(self.spec.reference_mode, {})
            self.test = get_mode(self.spec.test_mode, self.spec.mode_options)
        except UnknownMode as exc:
            raise HarnessBroken(str(exc)) from exc
        try:
            self.target = build_target_for(self.spec)
        except TargetError as exc:
            raise HarnessBroken(str(exc)) from exc
        from fuzz_core.target import UNDEFINED_OUTPUT_APIS, UNORDERED_OUTPUT_APIS

        if self.target.short_name in UNDEFINED_OUTPUT_APIS and self.spec.oracle in ("value", "nan_inf"):
            raise NotApplicable(f"{self.spec.api} returns uninitialised memory: no value to compare")
        if self.target.short_name in UNORDERED_OUTPUT_APIS and self.spec.oracle == "value":
            raise NotApplicable(f"{self.spec.api}: eigenvalue order and eigenvector phase are not defined")
        low = self.test.compute_dtype
        if low is not None:
            from fuzz_core.target import BIT_LEVEL_APIS

            if self.target.short_name in BIT_LEVEL_APIS:
                raise NotApplicable(f"{self.spec.api} depends on the dtype's bit pattern, not on values")
            op = self.target.opinfo
            if op is not None and low not in op.supported_dtypes("cpu"):
                raise NotApplicable(f"OpInfo says {op.name} does not support {low} on CPU")
        try:
            seeds, self.source = seed_samples(self.spec, self.target)
        except InputError as exc:
            raise HarnessBroken(str(exc)) from exc
        self.seeds = [self.canonical(s) for s in seeds]
        if not self.seeds:
            raise NoInputs("the trigger left no input")
        if any(t.layout != torch.strided for s in self.seeds for t in tensor_leaves(s.tree())):
            raise NotApplicable("sparse inputs are not fuzzed yet (layout modes and mutators assume strided tensors)")
        self._rng_probes = 0

    def canonical(self, sample: Sample) -> Sample:
        """The input as both modes will see it (e.g. already representable in a low test dtype)."""
        assert self.reference is not None and self.test is not None
        return self.test.canonicalize(self.reference.canonicalize(sample))

    def replay(self, recipe: dict[str, Any]) -> Sample:
        """Rebuild the input a recipe describes (used after a crash to save the crashing input)."""
        sample = self.seeds[int(recipe["seed_index"])]
        by_name = {m.name: m for m in self.mutators}
        for name, seed in recipe.get("steps", []):
            mutated = by_name[name].mutate(sample, torch.Generator().manual_seed(int(seed)))
            if mutated is None:
                break
            sample = self.canonical(mutated)
        return sample

    # -- execution -----------------------------------------------------------------------------
    @property
    def reseed(self) -> int | None:
        return self.spec.seed if self.random_op else None

    def _run(self, mode: Mode, sample: Sample) -> Execution:
        assert self.target is not None
        return self._gauge_free(execute(mode, self.target, sample, reseed=self.reseed))

    def _gauge_free(self, run: Execution) -> Execution:
        """For decompositions defined up to sign, compare magnitudes (a sign flip is not a bug)."""
        assert self.target is not None
        if run.status == "ok" and self.target.sign_ambiguous:
            run.output = map_tensors(run.output, lambda t: t.abs() if t.is_floating_point() or t.is_complex() else t)
        return run

    def _compare(self, ref_out: Any, test_out: Any, sample: Sample) -> Comparison:
        assert self.target is not None and self.test is not None
        return compare_outputs(
            ref_out, test_out, low_dtype=self.test.compute_dtype, compares_dtype=self.test.compares_dtype,
            returns_indices=self.target.returns_indices, inputs=tensor_leaves(sample.tree()))

    def evaluate(self, entry: CorpusEntry) -> Finding | str:
        """Run both modes on one input; a Finding, or 'pass' / 'skip' / 'na' / 'noise'."""
        assert self.target is not None and self.reference is not None and self.test is not None
        sample, oracle = entry.sample, self.spec.oracle
        try:
            self.test.check(self.target, sample)
        except NotApplicable as exc:
            self.tally.na_reasons.append(str(exc))
            return "na"
        if not self.random_op and self._rng_probes < 4:
            # Probe the first inputs for random ops (here, after the input's recipe was recorded).
            self._rng_probes += 1
            self.random_op = uses_rng(self.target, sample)
        if self.random_op and self.test.compute_dtype is not None:
            # Random draws depend on the dtype they are drawn in: low-precision runs cannot match them.
            self.tally.na_reasons.append("random op: draws differ between dtypes")
            return "na"
        ref = self._run(self.reference, sample)
        self.last_outputs = (ref.output, None)
        if ref.status != "ok":
            # The reference rejects the input: outside the API's domain, so nothing to compare.
            self.tally.invalid_reasons.append(ref.error_text)
            return "skip"
        test = self._run(self.test, sample)
        self.last_outputs = (ref.output, test.output)
        if test.status == "na":
            self.tally.na_reasons.append(str(test.error))
            return "na"
        if test.status == "exc":
            return self._confirm_exception(entry, test)
        if oracle == "crash":
            return "pass"
        if oracle == "nan_inf":
            return self._check_nan_inf(entry, test)
        if oracle == "exception":
            return "pass"
        comparison = self._compare(ref.output, test.output, sample)
        self.tally.notes.update(comparison.notes)
        if comparison.ok:
            return "pass"
        structural = [m for m in comparison.mismatches if m.kind != "value"]
        if structural:
            return self._confirm_structural(entry, structural[0])
        if oracle == "shape_dtype":
            return "pass"
        return self._confirm_value(entry, ref, test, comparison.first)

    # -- confirmation checks (DESIGN.md's five) --------------------------------------------------
    def _confirm_exception(self, entry: CorpusEntry, test: Execution) -> Finding | str:
        assert self.test is not None
        again = self._run(self.test, entry.sample)
        key = f"exception:{type(test.error).__name__}"
        details = {"test_exception": test.error_text}
        if again.status != "exc":
            return Finding(V.FLAKY, key, f"test mode raised once ({test.error_text}) but not on re-run", entry,
                           details=details)
        if self.spec.oracle == "exception":
            return Finding(V.CONFIRMED, key, f"{self.test.name} raises where {self.spec.reference_mode} returns: "
                                             f"{test.error_text}", entry, details=details)
        return Finding(V.SUSPICIOUS, key, f"{self.test.name} raises where the reference returns: {test.error_text}",
                       entry, details=details)

    def _confirm_structural(self, entry: CorpusEntry, mismatch: Mismatch) -> Finding:
        assert self.test is not None
        again = self._run(self.test, entry.sample)
        ref = self._run(self.reference, entry.sample)  # type: ignore[arg-type]
        key = f"{mismatch.kind}:{mismatch.path}"
        if again.status == "ok" and ref.status == "ok":
            repeat = self._compare(ref.output, again.output, entry.sample)
            if any(m.kind == mismatch.kind and m.path == mismatch.path for m in repeat.mismatches):
                return Finding(V.CONFIRMED, key, f"{mismatch.kind} mismatch at {mismatch.path}: {mismatch.detail}",
                               entry, mismatch)
        return Finding(V.FLAKY, key, f"{mismatch.kind} mismatch did not reproduce on re-run", entry, mismatch)

    def _check_nan_inf(self, entry: CorpusEntry, test: Execution) -> Finding | str:
        assert self.target is not None
        if not inputs_finite(entry.sample.tree()):
            return "pass"
        fp64 = execute_fp64(self.target, entry.sample, reseed=self.reseed)
        hit = unexpected_nonfinite(test.output, fp64.output if fp64.status == "ok" else None)
        if hit is None:
            return "pass"
        path, count, first = hit
        mismatch = Mismatch("nan_inf", path, f"{count} NaN/Inf where float64 is finite", math.inf, math.inf, count,
                            first)
        if self.reference is not None and self.reference.name != self.test.name:  # type: ignore[union-attr]
            # A differential pattern asks whether the modes disagree: when the reference mode produces
            # the same non-finite values, the overflow is the kernel's in every mode, not this pair's.
            ref = self._run(self.reference, entry.sample)
            ref_hit = unexpected_nonfinite(ref.output, fp64.output) if ref.status == "ok" else None
            if ref_hit is not None and ref_hit[0] == path:
                return "pass"
        if _near_overflow(entry.sample):
            return Finding(V.SUSPICIOUS, f"nan_inf:{path}", "NaN/Inf on inputs of extreme magnitude (beyond sqrt of "
                                                            "the dtype's max): float32 overflow of intermediates",
                           entry, mismatch)
        again = self._run(self.test, entry.sample)  # type: ignore[arg-type]
        if again.status != "ok" or unexpected_nonfinite(again.output, fp64.output) is None:
            return Finding(V.FLAKY, f"nan_inf:{path}", "NaN/Inf did not reproduce on re-run", entry, mismatch)
        return Finding(V.CONFIRMED, f"nan_inf:{path}", f"{count} NaN/Inf in {path} from finite inputs where the "
                                                       "float64 result is finite and in range", entry, mismatch)

    def _confirm_value(self, entry: CorpusEntry, ref: Execution, test: Execution, mismatch: Mismatch) -> Finding | str:
        assert self.target is not None and self.reference is not None and self.test is not None
        sample, key = entry.sample, f"value:{mismatch.path}"
        details: dict[str, Any] = {}
        # 2. Reference deterministic.
        ref_again = self._run(self.reference, sample)
        if ref_again.status != "ok" or not compare_outputs(ref.output, ref_again.output).ok:
            if not self.random_op:
                # A random op the RNG probe missed: compare again under a reseeded RNG.
                self.random_op = True
                return self.evaluate(entry)
            return Finding(V.SUSPICIOUS, key, "the reference mode is not deterministic on this input", entry, mismatch)
        # 1. Reproducible.
        test_again = self._run(self.test, sample)
        if test_again.status != "ok" or self._compare(ref.output, test_again.output, sample).ok:
            return Finding(V.FLAKY, key, "the difference did not reproduce on re-run", entry, mismatch)
        # 4. Worse than the reference against float64.
        fp64 = self._gauge_free(execute_fp64(self.target, sample, reseed=self.reseed))
        if fp64.status != "ok":
            return Finding(V.SUSPICIOUS, key, f"beyond tolerance, but no float64 reference ({fp64.error_text})",
                           entry, mismatch)
        ref_leaf = dict(output_leaves(ref.output)).get(mismatch.path)
        test_leaf = dict(output_leaves(test.output)).get(mismatch.path)
        fp64_leaf = dict(output_leaves(fp64.output)).get(mismatch.path)
        if not all(isinstance(x, torch.Tensor) for x in (ref_leaf, test_leaf, fp64_leaf)):
            return Finding(V.SUSPICIOUS, key, "beyond tolerance on a non-tensor output; fp64 rule not applicable",
                           entry, mismatch)
        judgement = judge_leaf(ref_leaf, test_leaf, fp64_leaf, low_dtype=self.test.compute_dtype,
                               rtol=mismatch.rtol, atol=mismatch.atol)
        details.update(ref_error_vs_fp64=judgement.ref_error, test_error_vs_fp64=judgement.test_error,
                       fp64_detail=judgement.detail)
        if judgement.test_worse is False:
            self.tally.fp64_accepted += 1
            return "noise"
        if judgement.test_worse is None:
            return Finding(V.SUSPICIOUS, key, f"beyond tolerance, fp64 inconclusive: {judgement.detail}", entry,
                           mismatch, details)
        low = self.test.compute_dtype
        if low is not None and ref_leaf.is_floating_point() and bool(
                (torch.isfinite(ref_leaf) & (ref_leaf.abs() > torch.finfo(low).max)).any()):
            # The exact result does not fit the low dtype: Inf/NaN downstream is what IEEE demands.
            return Finding(V.SUSPICIOUS, key, f"the float32 result exceeds the range of {low}; low-precision "
                                              "overflow is expected here", entry, mismatch, details)
        if not math.isfinite(mismatch.max_abs_diff) and not inputs_finite(sample.tree()) and not _drops_nonfinite(
                ref_leaf, test_leaf):
            # With NaN/Inf inputs, which non-finite value comes out (NaN from inf*0, or ±inf from
            # inf*tiny) depends on the order of operations; only a dropped NaN/Inf is clearly a bug.
            if _drops_nonfinite(test_leaf, ref_leaf):
                # The float64 run uses the same eager kernel, so it cannot arbitrate here.
                return Finding(V.SUSPICIOUS, key, f"{self.reference.name} returns finite values where "
                                                  f"{self.test.name} propagates NaN/Inf from the inputs: possibly a "
                                                  "lost NaN propagation in the reference kernel", entry, mismatch,
                               details)
            return Finding(V.SUSPICIOUS, key, "NaN/Inf mismatch on inputs that contain NaN/Inf (the non-finite "
                                              "class depends on operation order)", entry, mismatch, details)
        if _near_overflow(sample):
            # Beyond sqrt(max), intermediates are so large that another association order overflows
            # or loses everything to rounding (e.g. x*a + b with a huge scale); maintainers treat such
            # inputs as out of the practical domain, so the finding stays inconclusive.
            return Finding(V.SUSPICIOUS, key, "mismatch on inputs of extreme magnitude (beyond sqrt of the dtype's "
                                              "max): reassociated huge intermediates overflow or round away",
                           entry, mismatch, details)
        # Sensitivity: is the input so ill-conditioned that rounding-level changes explain the diff?
        if math.isfinite(mismatch.max_abs_diff) and mismatch.max_abs_diff > 0:
            moved = amplification(lambda tree: self.reference.run(self.target, sample.with_tree(tree)),  # type: ignore
                                  sample.tree(), ref.output, mismatch.path, mismatch.max_abs_diff, self.spec.seed)
            details["perturbation_shift"] = moved
            if moved is not None and moved >= AMPLIFICATION_FRACTION * mismatch.max_abs_diff:
                return Finding(V.SUSPICIOUS, key, f"amplification: a rounding-level input perturbation moves the "
                                                  f"reference by {moved:.3g}, the observed difference is "
                                                  f"{mismatch.max_abs_diff:.3g}", entry, mismatch, details)
        return Finding(V.CONFIRMED, key, f"{self.test.name} differs from {self.reference.name} beyond tolerance "
                                         f"({mismatch.detail}, max abs diff {mismatch.max_abs_diff:.3g}) and is "
                                         f"further from float64 (rmse {judgement.test_error:.3g} vs "
                                         f"{judgement.ref_error:.3g})", entry, mismatch, details)

    # -- the loop ------------------------------------------------------------------------------
    def _next_entry(self, corpus: list[CorpusEntry], iteration: int, gen: torch.Generator) -> CorpusEntry | None:
        if iteration < len(corpus) and corpus[iteration].recipe[1] == () and iteration < len(self.seeds):
            return corpus[iteration]
        for _attempt in range(64):  # some mutators do not apply to some inputs; only give up on none
            parent = corpus[self.selector.select(corpus, gen)]
            parent.picked += 1
            mutator = self.mutators[int(torch.multinomial(self._mutator_weights, 1, generator=gen))]
            step_seed = _int_seed(self.spec.seed, iteration, _attempt)
            child = mutator.mutate(parent.sample, torch.Generator().manual_seed(step_seed))
            if child is not None:
                child = self.canonical(child)
                recipe = (parent.recipe[0], parent.recipe[1] + ((mutator.name, step_seed),))
                return CorpusEntry(child, recipe)
        return None

    def run(self, *, budget_s: float | None, max_executions: int | None) -> None:
        if max_executions is None and budget_s is None:
            max_executions = DEFAULT_MAX_EXECUTIONS
        deadline = time.monotonic() + budget_s if budget_s is not None else math.inf
        corpus = [CorpusEntry(s, (i, ())) for i, s in enumerate(self.seeds)]
        gen = torch.Generator().manual_seed(_int_seed(self.spec.seed, 7))
        iteration = 0
        while True:
            if max_executions is not None and self.tally.executions >= max_executions:
                self.exit_reason = EXIT_MAX_EXECUTIONS
                return
            if time.monotonic() >= deadline:
                self.exit_reason = EXIT_TIME
                return
            # A mode that applies to none of the seeds will not apply to their mutants either.
            if iteration == len(self.seeds) and self.tally.not_applicable == len(self.seeds):
                self.exit_reason = EXIT_NOT_APPLICABLE
                return
            entry = self._next_entry(corpus, iteration, gen)
            iteration += 1
            if entry is None:
                self.exit_reason = EXIT_NO_CORPUS
                return
            if self.progress is not None:
                self.progress({"iteration": iteration - 1, "seed_index": entry.recipe[0],
                               "steps": [list(s) for s in entry.recipe[1]]})
            self.last_outputs = (None, None)
            outcome = self.evaluate(entry)
            self.tally.executions += 1
            if isinstance(outcome, Finding):
                self._keep(outcome)
                if outcome.verdict == V.CONFIRMED:
                    self.exit_reason = EXIT_CONFIRMED
                    return
                label = "fail"
            else:
                label = outcome
                if outcome in ("pass", "noise"):
                    self.tally.passed += 1
                elif outcome == "skip":
                    self.tally.invalid_input += 1
                elif outcome == "na":
                    self.tally.not_applicable += 1
            if self.selector.observe(entry, label, self.last_outputs):
                corpus.append(entry)

    def _keep(self, finding: Finding) -> None:
        """Keep the smallest failing input per distinct failure (and the strongest verdict)."""
        old = self.findings.get(finding.key)
        if old is None or V.VERDICT_RANK[finding.verdict] < V.VERDICT_RANK[old.verdict] or (
                finding.verdict == old.verdict and numel_total(finding.entry.sample.tree())
                < numel_total(old.entry.sample.tree())):
            self.findings[finding.key] = finding

    def best_finding(self) -> Finding | None:
        if not self.findings:
            return None
        return min(self.findings.values(), key=lambda f: (V.VERDICT_RANK[f.verdict],
                                                          numel_total(f.entry.sample.tree())))
