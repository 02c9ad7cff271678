"""The engine loop for one harness: seed inputs → mutate → run both modes → oracle → confirm; stop on budget.

The confirmation checks live in fuzz_core/confirm.py. For compiled test modes the loop compiles once and
runs many: new shapes (each a recompilation) are admitted only while compilation has taken less than
COMPILE_SHARE of the elapsed time; otherwise the next input is a value mutation of an input whose shapes
are already compiled.

Note [The hot loop]
A harness runs thousands of inputs, and on small ops the differential check itself (both modes and the
comparison) costs tens of microseconds, so everything else the loop does per input is paid against that.
Measured with benchmarks/fuzz_throughput.py --profile (sigmoid on 8x8, eager vs jit.trace, as a worker runs
it, on a busy 2-core machine): about 220 CPU microseconds per input (about 390 before the sampled coverage
backed off), of which, under cProfile, the two runs 42% (half of it the modes' own wrapping: input copies,
the traced call's structure key), choosing the parent and the mutator and mutating 32%, the non-finite count
6%, the progress record 5%, the comparison 3%, coverage 3%, the loop's bookkeeping 8%; the hand-written
loop's check (eager, traced, allclose) is about 45. What the loop does about each:
- coverage is measured on a sample of inputs (Note [Sampled coverage] in fuzz_core/cgf/selector.py), and the
  op-level dispatch scope is entered only around measured ones;
- outputs identical leaf for leaf (NaN where NaN) pass without the full comparison (`identical_outputs`):
  the full oracle, and the float64 confirmation, run only on inputs that disagree;
- per-mode lookups (the compile mode a mode runs through) are made once per mode, not per input;
- the value-mutator weights (compiled modes reusing compiled shapes) are made once, not per input; mutators use
  one reused torch generator reseeded per step (their draws are the recipe a crash replays);
- no per-input copy of the corpus; the worker's progress record is a copy into a memory-mapped file
  (fuzz_core/worker_main.py ProgressFile), so a crash or hang still names its input;
- a mode runs on the input itself, not a private copy, where the mode only hands the tensors to the target and
  the target's ATen schema neither writes to nor aliases them (Note [Input copies] in fuzz_core/execution.py);
- jit.trace, compiled modes and the compiled-shape bookkeeping key their caches by a tuple (structure_sig) and
  take the cached callable's tensors without rebuilding the call's template;
- draws keep their streams at a fraction of the cost: the mutator draw is multinomial's own argmax(w / Exp(1))
  into a reused buffer, index draws are randint's `random_` into a reused buffer (mutators.base.randbelow), and
  the mutators' edits are whole-tensor ops with their tables and a parent's spread worked out once
  (Note [Mutation cost] in fuzz_core/mutators/builtin.py); the same seed still gives the same inputs;
- the non-finite count sums each floating output (a finite sum means every element is finite) and checks
  element by element only when the sum is not finite.
After these, the same profile measured about 115 CPU microseconds per input against the hand loop's 28 on the
same busy machine (benchmarks/fuzz_throughput.py gives the ratios). Then, still with the same inputs per seed:
- the common input (unmeasured, deterministic target, neither mode compiling) runs both modes in one plain
  path (`_evaluate_plain`): execute's copies and version-counter checks, one switch of the grad mode, no
  compile bookkeeping, no Execution wrapping before it is needed; identical outputs pass at once;
- the worker's progress record is text put together from each corpus entry's steps, encoded once per entry
  (worker_main.RunProgress.encoded), not json.dumps per input;
- draws of one step are made in one call where they can (`random_(0, L)` with L a common multiple of the
  moduli: mutators.base.randbelow_pair, mutators.builtin._draws), and randperm(n)[:count] is a partial
  Fisher-Yates shuffle of `count` steps for large n.
That profile then measured about 44-50 CPU microseconds per input; on a quiet machine the pool ran eager vs
jit.trace at 0.40x the hand loop (from 0.27x), eager vs compile:inductor at 0.21x all-in / 0.26x steady.
Then compile modes look their backend up once, book dynamo's counters only when a frame was converted during
the call (Note [Counters per call] in modes/compile.py), and near-equal outputs pass through a numpy check with
the full comparison's verdict (oracles/compare.py). Two runs of the benchmark on a quiet machine measured eager
vs jit.trace at 0.37x and 0.40x, eager vs compile:inductor at 0.21-0.23x all-in and 0.28x steady. Where an
input's time went then (timed inside the loop, sigmoid 8x8): mutation about 36 microseconds, choosing the parent
and the mutator 15 (a torch generator call each), the compiled call 74 against 25 in a tight loop, the eager
reference through `execute` 27 (compiled modes did not take the plain path). This round, each for its reason:
- the parent and the mutator come from the campaign's DrawStream (mutators.base): a torch.Generator that also
  hands out uniform draws made 256 per generator call; the mutator is a uniform placed on the weights' running
  sums. The same seed gives the same inputs run to run, a different stream than before (tests that pinned the
  old one were moved to the new one). A step's seed is a base plus 64 per iteration plus the attempt, not a hash;
- an unmeasured input of a compiling test mode takes the plain path too, its compile time and compiled structure
  booked as run_mode books them;
- the compiled call itself is not slowed by our wrapper closure, the recording backend or the grad mode (each
  within 1 microsecond of the hand loop's torch.compile in a tight loop: 21.6 against 22.1, 22.7 under no_grad);
  what the fuzzer adds is dynamo's side of exploring: after the first new size the graph is dynamic (16 against
  14 microseconds), and the shapes and strides the corpus reaches leave several cache entries (9 on sigmoid in
  10 s), so a call in the loop took 35 microseconds median. Exploring them is the point, so that stays; the mode's
  own work per call (the key) is made without the structure walk for plain tensor arguments;
- most outputs are not plain and equal: in a sigmoid run 89% of the inputs were not 8x8 (the corpus drifts to
  shape-changed entries) and 55% of the outputs held NaN or Inf. So the non-finite count of a small float32/64
  output is numpy's isfinite in one call; identical plain outputs pass before any Execution is built; outputs
  that differ where the test output is finite are told apart by torch.equal alone (near-equal compiled outputs
  reach the comparison four torch calls sooner).
What is left is the mutators and the inputs they make: the same loop with a mutator that draws a fresh randn
input per step (what the hand loop does) ran at about 31 CPU microseconds per input against about 48 with the
default mutators and 22 for the hand loop (sigmoid, jit.trace, in process). Value edits cost 9-10 microseconds in
a tight loop (a reseed, one draw call, a copy, the edit), structural ones more, and NaN-holding or non-contiguous
inputs cost more to run and check. For compile:inductor the all-in ratio is also bounded by COMPILE_SHARE: new
shapes may take up to half of the elapsed time (about a quarter of the benchmark's 20 s windows), a choice for
what a harness explores, left as it is. The benchmark on the shared 2-core machine (other work put the load at
1-4, so ratios moved from run to run): before this round eager vs jit.trace 0.34x, eager vs compile:inductor
0.20x all-in / 0.25x steady (load 0.4 rising to 1.2); after it three runs gave jit.trace 0.33x, 0.54x and 0.38x
(the last the quietest: load 1.0 at its start, pool 16428 checks/s against 14482 before at a like load, hand
loop 43779 against 42734) and inductor 0.34x, 0.23x, 0.25x all-in and 0.44x, 0.34x, 0.34x steady. The 0.5x
target is not met for either pair on a quiet machine.
The next round kept every seed's inputs (a 3000-input stream of add and sigmoid under jit.trace, values, strides
and recipes, hashes the same before and after) and cut calls: on this machine (the hand loop about 85-100
microseconds a check; a call in the campaign loop costs two to three times what it costs in a tight loop, a
gaussian mutation 14 alone and 38 in the loop) next_entry (parent, mutator, mutation) took about as long as
evaluate, and on torch.add, whose coverage keeps finding novel outputs (one input in 64 measured), the measured
inputs took about an eighth of the run. So:
- Gaussian noise on a contiguous float32 argument of 16 elements or more is one torch.normal(t, std): randn, the
  multiplication and the sum in one call, the same bits (normal_fill's multiply-add by std and 0 is the rounded
  product; checked once per build by mutators.builtin._normal_is_scaled_randn); the offset and shape mutators draw
  their two values in one call (randbelow_pair); special and boundary values keep their draw plan per (values,
  candidates, size) and copy with one clone; the layout copy is a view and a select instead of two slicings;
- a measured input's output summary (coverage.features.summary_features) skips the boolean selection where every
  element is finite and takes min and max from one aminmax: the same values, about 30% less;
- the loop looks the selector's `measures` up once per run; an unmeasured input makes no set in observe.
The benchmark (--seconds 5 --compile-seconds 20), before: eager vs jit.trace 0.443x (load 1.0-1.2) and 0.409x
(load 1.5-1.1, the old tree run just after the new one), eager vs compile:inductor 0.348x/0.344x all-in and
0.532x/0.511x steady; after: jit.trace 0.456x (first commit only, load 1.5) and 0.500x (load 0.55 rising to 2.25:
pool 5094 checks/s, hand loop 10198), inductor 0.333x/0.348x all-in and 0.509x/0.538x steady. On this loaded
machine jit.trace is at the 0.5x target, not clearly past it; inductor steady is past it, inductor all-in is not.
The inductor all-in ratio is bounded by COMPILE_SHARE, not by the loop: the pool compiled for 23-24 s of its
three 20 s windows (new shapes and strides: dynamic sizes, non-contiguous, column-major, expanded, zero-size)
while the hand loop compiles once (about 1.5 s); with one compilation the all-in ratio would be about the steady
one times 0.93. Lowering the share trades what a compiled harness explores, so it is left as it is. What is left
in the loop: the value mutators are a reseed, one draw and one or two edits (near their floor for an unchanged
stream), the coverage index's search (usearch, about 130 microseconds a measured input) and the evaluation of
NaN-holding and non-contiguous inputs.
The sandboxed pool batches all of a harness's inputs into one round trip: the worker answers once per harness.
Where a compilation's time goes (torch 2.13, CPU): about 0.8 s of each 0.5-1.2 s recompilation is g++ building the
kernel at -O3 (inductor's precompiled header already in use; compile_threads 1 or 2 the same), so neither the loop
nor inductor's settings can cut it without testing code users never run: the all-in ratio stays bounded by
COMPILE_SHARE. In the steady loop the compiled call costs about 45 microseconds on 8x8 through the mode (of which
the mode's own bookkeeping about 10-13, a dynamic graph with several cache entries about 12 more than a fresh
static compile), against about 190 per input in all.
The next round timed each phase of the loop (perf_counter around each call, 8000 inputs, add on 8x8 under
jit.trace, in process): making the next input took 26 microseconds, evaluating it 27, coverage 7, the progress
record 2 (63 in all; the hand loop's check 25, of which its allclose 16, where the loop's own check of identical
outputs costs a few). A tight loop put a value mutation at 8-11 microseconds and a structural one at 12-17, most of
it per call. So the value mutators make bursts of children from one draw call (Note [Mutation bursts] in
fuzz_core/mutators/builtin.py), each mutator keeping its share of the inputs, and a measured input costs less: its
output summary is numpy's reductions (36 -> 15 microseconds) and its novelty query an exact scan of a small numpy
buffer (26 -> 9; Note [Exact search first] in fuzz_core/coverage/ann.py). After it: add 45 microseconds an input
(making it 17), sigmoid 40 (from 52). The benchmark, the tree before and after run back to back on the same
machine (load about 1.0): eager vs jit.trace 0.414x before, 0.528x after (pool 17476 -> 22323 checks/s, hand loop
42247 / 42302; another run after: 0.535x); eager vs compile:inductor 0.295x -> 0.366x all-in, 0.367x -> 0.445x
steady. Inductor stays below 0.5x: the compiled call through the mode costs about 25 microseconds in the loop (15
in a tight loop), the compiled modes' private input copy about 3, and the compile share as above.
Where the compile share went, per compilation (a 20 s sigmoid harness, in process): 4 kernel builds of 0.9-1.5 s
(static 8x8, a dynamic size, a second dynamic size, size 1) and 7 recompilations of 0.10-0.16 s for empty inputs
that differed only in their strides. Those strides place no value, so compiled modes now take an empty input as
the contiguous empty tensor of its shape (Note [Empty inputs in compiled code] in modes/compile.py). The benchmark
on a loaded machine (load about 1): the pool's compile time over its three 20 s inductor windows 18.3 s -> 14.1 s,
eager vs compile:inductor 0.397x -> 0.415x all-in (0.541x / 0.508x steady: within the run-to-run spread);
eager vs jit.trace 0.551x, 0.631x, 0.562x over three runs.
The hand loop checks one structure (fresh 8x8 float32 values); the default harness also explores structures, each
a compilation. So the benchmark adds a pool, in a worker of its own, that runs the same harness with mutate="values"
(Note [Value-only mutation] below): the hand loop's inputs, values mutated. One run (load 0.34 rising to 1.02):
eager vs jit.trace 0.552x default / 0.669x values only; eager vs compile:inductor 0.418x all-in and 0.490x steady
default (compiling 10.8 s of its three 20 s windows), 0.608x all-in values only (compiling 2.2 s).
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import itertools
import json
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy
import torch

from fuzz_core import result as V
from fuzz_core.confirm import Finding, check_nan_inf, confirm_exception, confirm_structural, confirm_value
from fuzz_core.execution import Execution, copies_inputs, detach_output, execute, failed, wrote_to_input
from fuzz_core.inputs import InputError, NoInputs, Sample
from fuzz_core.inputs.code import code_samples
from fuzz_core.inputs.described import described_samples
from fuzz_core.inputs.opinfo import find_opinfo, opinfo_samples
from fuzz_core.inputs.inventory import inventory_samples
from fuzz_core.inputs.triggers import apply_trigger
from fuzz_core.modes import Mode, NotApplicable, get_mode
from fuzz_core.mutators import DEFAULT_MUTATORS, CorpusEntry, CorpusSelector, Mutator, UniformSelector
from fuzz_core.mutators.base import DrawStream
from fuzz_core.oracles import compare_outputs
from fuzz_core.oracles.compare import Comparison
from fuzz_core.rng import uses_rng
from fuzz_core.spec import HarnessSpec
from fuzz_core.target import Target
from fuzz_core.tensors import clone_tree, map_tensors, numel_total, structure_key, structure_sig, tensor_leaves

__all__ = ["Campaign", "Finding", "HarnessBroken", "Tally", "build_target_for", "seed_samples"]

# Exit reasons (why the loop stopped).
EXIT_CONFIRMED = "confirmed"
EXIT_MAX_EXECUTIONS = "max_executions"
EXIT_TIME = "time_budget"
EXIT_NOT_APPLICABLE = "not_applicable"
EXIT_NO_CORPUS = "no_mutable_input"

DEFAULT_MAX_EXECUTIONS = 200
# Past its time budget (or past the end of a compilation that ran beyond it) a harness may run on for at most
# this long while it has compared fewer inputs than its minimum: right after a compilation the next inputs
# reuse compiled code and cost milliseconds, so a compile-heavy harness still reaches a verdict that is not
# `inconclusive`.
MIN_INPUTS_OVERRUN_S = 1.0

# Note [Compiled objects and the collector]
# A compilation leaves hundreds of thousands of Python objects behind (FX graphs, guards, inductor's IR and
# kernels), most of them kept for as long as the compiled code is. The collector's next full pass walks them all,
# in the middle of the fuzz loop: measured 0.23 s on one input right after a tanh compilation on an idle machine,
# longer on a loaded one, where it ate the min-inputs overrun (41 of 50 inputs compared). So each compilation ends
# with gc.freeze(): what exists then is left out of later passes (cheap: the generations are moved, not walked).
# Garbage cycles among those objects wait until run_harness unfreezes them when the harness ends.
# Compiled modes: a new shape (a recompilation) is admitted only while compiling has taken less than this
# share of the time spent so far; the rest of the time runs value mutations through compiled code.
COMPILE_SHARE = 0.5
# Mutators that keep every tensor's shape, dtype and strides: no recompilation in compiled modes.
VALUE_MUTATORS = ("gaussian", "special", "boundary", "offset")
# Note [Value-only mutation]
# A spec with mutate="values" is fuzzed by VALUE_MUTATORS alone: every input keeps its seed's structure, so a
# compiled mode compiles once per seed structure and then runs values through that code. It is for a report
# whose shape is the trigger (explore values at that shape, nothing else) and for measuring the engine on the
# inputs a hand-written check runs (benchmarks/fuzz_throughput.py's "values only" row). The default ("all")
# also explores shapes, strides and dtypes, each new structure a new compilation (COMPILE_SHARE bounds them).
# Note [Earned passes]
# A pass rests on compared inputs only: inputs both modes ran and the oracle compared (outcome pass/noise or a
# Finding). Inputs the reference rejected (outside the API's domain) or that were not applicable (the mode does
# not apply, or a compiled mode did not compile: Note [Proof of compilation] in modes/compile.py) are counted
# and reported, never passed. As Hypothesis's filter_too_much health check (50 inputs filtered before 10 valid
# ones), a run that compared fewer than HEALTH_MIN_COMPARED inputs while HEALTH_MAX_UNCOMPARED or more were not
# compared is no pass, whatever the minimum; and when most inputs were not compared the reason says so.
HEALTH_MIN_COMPARED = 10
HEALTH_MAX_UNCOMPARED = 50


# Note [A device the modes skip]
# A pattern seen on an accelerator keeps the device as its test mode's `device` option (Note [Device-only reports]
# in agent/extract/modes.py), and a layout, dtype, compile or gradient pattern from a CUDA report carries it into
# its harnesses. Only the device modes (device:cuda, grad:device:cuda) move inputs to a device; every other mode
# runs on the CPU whatever its options say. Such a harness used to run there anyway: its findings were CPU findings
# under a spec that named cuda, and a pass of the report's own API was read as "fixed in torch X" for a bug that
# was only ever seen on CUDA. So it is not_applicable, with a reason that names the device: where the device is
# absent (as for device:cuda), and where it exists but the mode would not use it.
def device_not_run(test_mode: str, options: dict[str, Any]) -> str | None:
    """Why a harness whose options name an accelerator its test mode never runs on is not applicable, or None."""
    device = str(options.get("device") or "").split(":", 1)[0]
    if not device or device == "cpu" or test_mode.startswith(("device:", "grad:device:")):
        return None
    if not _device_available(device):
        return f"{device} is not available on this machine (the pattern was seen on {device})"
    return (f"{test_mode} does not run on {device}: the pattern was seen there, and only the device modes "
            "(device:cuda, grad:device:cuda) move inputs to an accelerator")


def _device_available(device: str) -> bool:
    if device == "mps":  # the one backend whose availability lives under torch.backends
        return bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())
    backend = getattr(torch, device, None)  # torch.cuda, torch.xpu, ...
    return bool(backend is not None and hasattr(backend, "is_available") and backend.is_available())


class HarnessBroken(RuntimeError):
    """The harness (not the target) is broken: verdict `error`."""


@dataclass
class Tally:
    executions: int = 0  # every input the loop ran, compared or not
    compared: int = 0  # Note [Earned passes]: both modes ran and the oracle compared (pass, noise or a Finding)
    passed: int = 0
    invalid_input: int = 0
    not_applicable: int = 0
    fp64_accepted: int = 0
    rounding_accepted: int = 0  # low-precision differences within the op's composite-depth allowance
    closeness: float = 0.0  # largest difference / tolerance among agreeing inputs (signal for the budget)
    nonfinite_outputs: int = 0  # inputs whose test output holds NaN/Inf (signal for the budget)
    compile_s: float = 0.0  # time spent compiling (first calls and recompilations of compiled modes)
    execute_s: float = 0.0  # time spent running both modes, compilation excluded
    compiles: int = 0
    notes: set[str] = field(default_factory=set)
    # "<mutator>: <exception type>" -> count: mutations that raised on their input (Note [Mutators that raise])
    mutator_errors: Counter[str] = field(default_factory=Counter)
    na_reasons: list[str] = field(default_factory=list)
    invalid_reasons: list[str] = field(default_factory=list)

    @property
    def uncompared(self) -> int:
        """Inputs the reference rejected or that were not applicable."""
        return self.invalid_input + self.not_applicable

    def figures(self) -> str:
        return (f"{self.compared} of {self.executions} inputs compared, {self.invalid_input} rejected by the "
                f"reference, {self.not_applicable} not applicable")

    @staticmethod
    def _most_common(reasons: list[str]) -> str:
        return Counter(reasons).most_common(1)[0][0] if reasons else ""

    def mostly_uncompared(self) -> bool:
        return self.uncompared > self.compared

    def health_failed(self) -> bool:
        """Note [Earned passes]: too few inputs compared among too many that were not."""
        return self.compared < HEALTH_MIN_COMPARED and self.uncompared >= HEALTH_MAX_UNCOMPARED

    def health_note(self) -> str:
        """Why most inputs were not compared, with the figures; '' when most were compared."""
        if not self.mostly_uncompared():
            return ""
        why = [f"rejected: {self._most_common(self.invalid_reasons)}" if self.invalid_input else "",
               f"not applicable: {self._most_common(self.na_reasons)}" if self.not_applicable else ""]
        return f"most inputs were not compared: {self.figures()}; most often " + "; ".join(w for w in why if w)

    def no_input_reason(self) -> str:
        """Why a run that compared no input compared none (the commonest reason first), with the figures."""
        na = self._most_common(self.na_reasons) or "mode not applicable"
        rejected = self._most_common(self.invalid_reasons)
        if self.not_applicable >= self.invalid_input:
            also = f"; rejected by the reference: {rejected}" if self.invalid_input else ""
            return f"{na} [{self.figures()}{also}]"
        also = f"; not applicable: {na}" if self.not_applicable else ""
        which = "every input" if not self.not_applicable else f"{self.invalid_input} inputs"
        return f"no valid input: the reference mode rejected {which}: {rejected} [{self.figures()}{also}]"


_UNSET = object()


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
        source = "signature"  # OpInfo variants/aliases, signature, ATen schemas, module constructors
        samples = inventory_samples(target, dtype, spec.seed, spec.max_samples)
    return _fitting_trigger(samples, spec, target), source


# Note [Trigger parameters no input fits]
# A transferred trigger's parameters come from the report's API: normalized_shape=[10] from a layer_norm report
# placed on inputs of another shape, in_channels=1 on a module whose seed input has 4 channels, unique's `sorted`
# on index_fill. No input then fits, and the reference rejects every mutant: a real-reports run spent 12 of its
# 217 harnesses' budgets on thousands of rejected inputs each, to end not_applicable. So where no seed runs in
# eager with the trigger's parameters and some do without one of them (else without all of them), the harness
# drops those and keeps the rest of its trigger (layer_norm keeps eps=1e-12); every seed's origin names what was
# dropped ("+without:normalized_shape"), and so does the evidence of what it finds.
def _fitting_trigger(samples: list[Sample], spec: HarnessSpec, target: Target) -> list[Sample]:
    seeds = apply_trigger(samples, spec.trigger, spec.seed, target)
    params = dict((spec.trigger or {}).get("params") or {})
    if not params or not samples or _any_runs(target, seeds):
        return seeds
    for dropped in [[name] for name in params] + ([list(params)] if len(params) > 1 else []):
        trigger = {**spec.trigger, "params": {k: v for k, v in params.items() if k not in dropped}}
        fitting = apply_trigger(samples, trigger, spec.seed, target)
        if _any_runs(target, fitting):
            mark = "+without:" + ",".join(dropped)
            return [s.with_tree(s.tree(), origin=f"{s.origin}{mark}") for s in fitting]
    return seeds


def _any_runs(target: Target, samples: list[Sample]) -> bool:
    """Some sample runs in eager without raising (the fuzz loop's reference would accept it)."""
    eager = get_mode("eager")
    for sample in samples:
        try:
            with torch.no_grad():
                eager.run(target, sample.with_tree(clone_tree(sample.tree())))  # an in-place op keeps the seed
        except Exception:  # noqa: BLE001 - any rejection: the input is outside the API's domain
            continue
        return True
    return False


class Campaign:
    """One harness, run in the current process. `progress` is told each input's recipe before it runs.

    `instrument` (none|module|op|kernel): at "op" and above, reference executions run inside the
    selector's op scope when it has one (op-level coverage for the CoverageSelector).
    """

    def __init__(self, spec: HarnessSpec, *, selector: CorpusSelector | None = None,
                 mutators: Sequence[Mutator] | None = None,
                 progress: Callable[[dict[str, Any]], None] | None = None, instrument: str = "none") -> None:
        self.spec = spec
        self.selector: CorpusSelector = selector or UniformSelector()
        self.mutators = list(mutators or DEFAULT_MUTATORS)
        if spec.mutate == "values":  # Note [Value-only mutation]
            self.mutators = [m for m in self.mutators if m.name in VALUE_MUTATORS]  # none: prepare() says so
        # Children per pick (Note [Mutation bursts] in fuzz_core/mutators/builtin.py): a burst mutator is picked
        # `burst` times less often, so its share of the inputs stays its weight's share.
        self._bursts = [_burst_size(m) for m in self.mutators]
        self._mutator_weights = torch.tensor([float(getattr(m, "weight", 1.0)) / b
                                              for m, b in zip(self.mutators, self._bursts)])
        self._value_mutators = [i for i, m in enumerate(self.mutators) if m.name in VALUE_MUTATORS]
        self._value_weights = torch.zeros_like(self._mutator_weights)  # reuse of compiled shapes: value mutators only
        self._value_weights[self._value_mutators] = self._mutator_weights[self._value_mutators]
        # id of a weights tensor above -> the tensor, its running sums ([] where multinomial would reject it) and
        # the index of its last positive weight (_draw_mutator)
        self._weight_sums: dict[int, tuple[torch.Tensor, list[float], int]] = {}
        self.progress = progress
        # A progress callback that takes the recipe already encoded (worker_main.RunProgress): Note [The hot loop].
        self._progress_encoded: Callable[[int, int, str], None] | None = getattr(progress, "encoded", None)
        self._mutator_json = [json.dumps(m.name) for m in self.mutators]  # each name as a JSON string
        self.instrument = instrument
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
        # Structures (tensors_sig: dtypes, shapes, other values) the compiled test mode has already compiled.
        self.compiled_shapes: set[Any] = set()
        self._composites: dict[str, tuple[Any, int]] = {}
        self._started = time.monotonic()
        self._last_compile_end = 0.0  # when the latest compilation finished (the min-inputs overrun counts from it)
        # Per-mode lookups the hot loop would otherwise repeat for every input (Note [The hot loop]).
        self._compiling: dict[int, Any] = {}
        self._step_gen = torch.Generator()  # reseeded per mutation step: the same draws as a fresh generator
        self._step_seed_base = _int_seed(spec.seed, 3) >> 1  # a step's seed: this + 64 * iteration + attempt
        # The burst being handed out: [parent, mutator index, step seed, children, next row] (_next_entry)
        self._burst: list[Any] | None = None
        self._measured = True  # whether the input now running is one the selector measures (op scope)
        self._compiles_for: Mode | None = None  # the test mode `compiles` was answered for, and the answer
        self._test_compiles = False
        self._sign_ambiguous = True  # target.sign_ambiguous, looked up once the target is built (prepare)
        self._plain = False  # the reference does not compile (prepare): Campaign._evaluate_plain may run the input
        self._test_compiling: Any = None  # the compile mode the test mode runs through, or None (prepare)
        self._compares_values = spec.oracle in ("value", "shape_dtype")  # identical outputs pass at once (_judge)
        self._canonical_as_is = False  # neither mode's canonicalize changes an input (prepare): no call per input
        self._checks = True  # the test mode has a check of its own (prepare); Mode.check does nothing
        # _compiled_entries' list: [the corpus, how many of its entries were looked at, len(compiled_shapes) then,
        # the entries whose shapes are compiled]
        self._compiled_view: list[Any] | None = None

    # -- setup ---------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Build target, modes and seed inputs; raises HarnessBroken, NoInputs or NotApplicable."""
        from fuzz_core.modes import UnknownMode
        from fuzz_core.target import TargetError

        if not self.mutators:  # only mutate="values" can empty the list (an empty argument means the defaults)
            raise HarnessBroken(f"mutate 'values' leaves none of the given mutators (value mutators: "
                                f"{', '.join(VALUE_MUTATORS)})")
        try:
            self.reference = get_mode(self.spec.reference_mode, {})
            self.test = get_mode(self.spec.test_mode, self.spec.mode_options)
        except UnknownMode as exc:
            raise HarnessBroken(str(exc)) from exc
        elsewhere = device_not_run(self.spec.test_mode, self.spec.mode_options)  # Note [A device the modes skip]
        if elsewhere is not None:
            raise NotApplicable(elsewhere)
        try:
            self.target = build_target_for(self.spec)
        except TargetError as exc:
            raise HarnessBroken(str(exc)) from exc
        from fuzz_core.target import UNDEFINED_OUTPUT_APIS, UNORDERED_OUTPUT_APIS

        if self.target.short_name in UNDEFINED_OUTPUT_APIS and self.spec.oracle in ("value", "nan_inf"):
            raise NotApplicable(f"{self.spec.api} returns uninitialised memory: no value to compare")
        if self.target.short_name in UNORDERED_OUTPUT_APIS and self.spec.oracle == "value":
            raise NotApplicable(f"{self.spec.api}: eigenvalue order and eigenvector phase are not defined")
        from fuzz_core.target import ADDRESS_APIS, LAYOUT_QUERY_APIS

        if self.target.short_name in ADDRESS_APIS or (self.target.short_name in LAYOUT_QUERY_APIS
                                                      and self.test.name.startswith("layout:")):
            raise NotApplicable(f"{self.spec.api} reports the memory layout or address itself: "
                                f"{self.test.name} changes it by definition")
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
        self._sign_ambiguous = bool(self.target.sign_ambiguous)
        self._plain = self._compile_mode(self.reference) is None
        self._test_compiling = self._compile_mode(self.test)
        self._canonical_as_is = all(getattr(m.canonicalize, "__func__", None) is Mode.canonicalize
                                    for m in (self.reference, self.test))
        self._checks = getattr(self.test.check, "__func__", None) is not Mode.check
        self.seeds = [self.canonical(s) for s in seeds]
        if not self.seeds:
            raise NoInputs("the trigger left no input")
        if any(t.layout != torch.strided for s in self.seeds for t in tensor_leaves(s.tree())):
            raise NotApplicable("sparse inputs are not fuzzed yet (layout modes and mutators assume strided tensors)")
        self._rng_probes = 0

    def _compile_mode(self, mode: Mode | None) -> Any:
        """The compile mode `mode` runs through, or None (looked up once per mode)."""
        if mode is None:
            return None
        key = id(mode)
        if key not in self._compiling:
            from fuzz_core.modes.compile import compile_mode_of

            self._compiling[key] = compile_mode_of(mode)
        return self._compiling[key]

    @property
    def compiles(self) -> bool:
        """The test mode compiles per input structure (recompilation is its main cost); grad:compile too."""
        test = self.test
        if self._compiles_for is not test or test is None:
            self._compiles_for, self._test_compiles = test, self._compile_mode(test) is not None
        return self._test_compiles

    def compiled_evidence(self) -> dict[str, Any] | None:
        """What dynamo did for this harness (Note [Proof of compilation]); None for modes that do not compile."""
        from fuzz_core.modes.compile import compile_mode_of

        mode = compile_mode_of(self.test)
        return None if mode is None else mode.record.to_dict()

    def canonical(self, sample: Sample) -> Sample:
        """The input as both modes will see it (e.g. already representable in a low test dtype)."""
        assert self.reference is not None and self.test is not None
        return self.test.canonicalize(self.reference.canonicalize(sample))

    def replay(self, recipe: dict[str, Any]) -> Sample:
        """Rebuild the input a recipe describes (used after a crash to save the crashing input)."""
        sample = self.seeds[int(recipe["seed_index"])]
        by_name = {m.name: m for m in self.mutators}
        for step in recipe.get("steps", []):
            name, seed = step[0], int(step[1])
            gen = torch.Generator().manual_seed(seed)
            if len(step) > 2:  # a burst child (Note [Mutation bursts]): the burst again, then its row
                children = by_name[name].mutate_burst(sample, gen)  # type: ignore[attr-defined]
                row = int(step[2])
                mutated = children[row] if children and 0 <= row < len(children) else None
            else:
                mutated = by_name[name].mutate(sample, gen)
            if mutated is None:
                break
            sample = self.canonical(mutated)
        return sample

    # -- execution -----------------------------------------------------------------------------
    @property
    def reseed(self) -> int | None:
        return self.spec.seed if self.random_op else None

    def run_mode(self, mode: Mode, sample: Sample, leaves: list[torch.Tensor] | None = None) -> Execution:
        """One execution of `mode` on `sample`, compile time and run time tallied apart. `leaves`: the sample's
        tensor leaves, when the caller has them."""
        assert self.target is not None
        compiling = self._compiling.get(id(mode), _UNSET)
        if compiling is _UNSET:
            compiling = self._compile_mode(mode)  # grad:compile compiles through its forward mode
        reseed = self.spec.seed if self.random_op else None
        if compiling is None:  # the common case: nothing to tell compile time from run time
            start = time.monotonic()
            if self._measured and (mode is self.reference or mode.dispatch_observable):
                with self._op_scope():
                    run = execute(mode, self.target, sample, reseed=reseed, leaves=leaves)
            else:
                run = execute(mode, self.target, sample, reseed=reseed, leaves=leaves)
            self.tally.execute_s += time.monotonic() - start
            return self.gauge_free(run) if self._sign_ambiguous else run
        compiles_before = int(getattr(compiling, "compiles", 0))
        start = time.monotonic()
        if self._measured and (mode is self.reference or mode.dispatch_observable):
            with self._op_scope():
                run = execute(mode, self.target, sample, reseed=reseed, leaves=leaves)
        else:
            run = execute(mode, self.target, sample, reseed=reseed, leaves=leaves)
        spent = time.monotonic() - start
        if int(getattr(compiling, "compiles", 0)) > compiles_before:
            self._book_compile(spent)
        else:
            self.tally.execute_s += spent
        return self.gauge_free(run)

    def _book_compile(self, seconds: float) -> None:
        """A compilation just ended: book its time and freeze what it left (Note [Compiled objects and the
        collector])."""
        self.tally.compile_s += seconds
        self.tally.compiles += 1
        gc.freeze()
        self._last_compile_end = time.monotonic()

    def _op_scope(self) -> Any:
        scope = getattr(self.selector, "op_scope", None)
        if self.instrument in ("op", "kernel") and scope is not None:
            return scope()
        return contextlib.nullcontext()

    def gauge_free(self, run: Execution) -> Execution:
        """For decompositions defined up to sign, compare magnitudes (a sign flip is not a bug)."""
        assert self.target is not None
        if run.status == "ok" and self.target.sign_ambiguous:
            run.output = map_tensors(run.output, lambda t: t.abs() if t.is_floating_point() or t.is_complex() else t)
        return run

    def compare(self, ref_out: Any, test_out: Any, sample: Sample, *, shortcut: bool = True) -> Comparison:
        """The oracle's comparison; outputs identical leaf for leaf (NaN where NaN) pass without it, as they
        would through it (Note [The hot loop]). `shortcut=False` where that was asked already, or where
        compare_outputs' own fast paths (torch.equal, the quick pass) are the cheaper way to the same answer."""
        assert self.target is not None and self.test is not None
        if shortcut and identical_outputs(ref_out, test_out):
            return Comparison()
        return compare_outputs(
            ref_out, test_out, low_dtype=self.test.compute_dtype, compares_dtype=self.test.compares_dtype,
            returns_indices=self.target.returns_indices, inputs=tensor_leaves(sample.tree()))

    def composite(self, sample: Sample) -> tuple[Any, int]:
        """The target traced to decomposed ATen ops on inputs of this structure, and its rounding depth
        (cached per structure)."""
        from fuzz_core.modes.base import bound_callable
        from fuzz_core.oracles.depth import composite_depth, trace_composite

        assert self.target is not None
        key = structure_key(sample.tree(), with_shapes=True)
        if key not in self._composites:
            graph = trace_composite(bound_callable(self.target, sample), sample.tree())
            self._composites[key] = (graph, composite_depth(graph))
        return self._composites[key]

    def evaluate(self, entry: CorpusEntry) -> Finding | str:
        """Run both modes on one input; a Finding, or 'pass' / 'skip' / 'na' / 'noise'."""
        assert self.target is not None and self.reference is not None and self.test is not None
        sample, oracle = entry.sample, self.spec.oracle
        if self._checks:
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
        args = sample.args  # both runs check the input's version counters on its tensors (`leaves`)
        leaves = (list(args) if not sample.kwargs and all([type(a) is torch.Tensor for a in args])
                  else tensor_leaves(sample.tree()))
        if not self._measured and self._plain and not self.random_op:
            return self._evaluate_plain(entry, leaves)
        ref = self.run_mode(self.reference, sample, leaves)
        self.last_outputs = (ref.output, None)
        if ref.status != "ok":
            # The reference rejects the input: outside the API's domain, so nothing to compare.
            self.tally.invalid_reasons.append(ref.error_text)
            return "skip"
        test = self.run_mode(self.test, sample, leaves)
        if self.compiles:
            self.compiled_shapes.add(_shape_sig(entry))
        self.last_outputs = (ref.output, test.output)
        if test.status == "na":
            self.tally.na_reasons.append(str(test.error))
            return "na"
        if test.status == "exc":
            return confirm_exception(self, entry, test)
        if _has_nonfinite(test.output):
            self.tally.nonfinite_outputs += 1
        if oracle == "crash":
            return "pass"
        if oracle == "nan_inf":
            return check_nan_inf(self, entry, test)
        if oracle == "exception":
            return "pass"
        return self._compared(entry, ref, test)

    def _compared(self, entry: CorpusEntry, ref: Execution, test: Execution) -> Finding | str:
        """The oracle's comparison of both outputs and, where they differ, the confirmation. Identical outputs
        were let through before (`_judge`) or pass through compare_outputs' fast paths, closeness 0, no notes."""
        oracle = self.spec.oracle
        comparison = self.compare(ref.output, test.output, entry.sample, shortcut=False)
        self.tally.notes.update(comparison.notes)
        if comparison.ok:
            self.tally.closeness = max(self.tally.closeness, min(comparison.closeness, 1.0))
            return "pass"
        structural = [m for m in comparison.mismatches if m.kind != "value"]
        if structural:
            return confirm_structural(self, entry, structural[0])
        if oracle == "shape_dtype":
            return "pass"
        return confirm_value(self, entry, ref, test, comparison.first)

    def _evaluate_plain(self, entry: CorpusEntry, leaves: list[torch.Tensor]) -> Finding | str:
        """`evaluate` for the common input (Note [The hot loop]): not measured (no op scope), a deterministic
        target, a reference that does not compile. Both runs are made as `execute` makes them (a private copy of the
        input for a mode that could write to it, else the input itself and the version-counter check) under one
        switch of the grad mode; a compiling test mode's run is booked as `run_mode` books it (compile time apart
        from run time, its structure among the compiled ones); outputs identical leaf for leaf pass at once. Any
        other outcome goes on as `evaluate` goes on."""
        assert self.target is not None and self.reference is not None and self.test is not None
        sample, target, reference, test_mode = entry.sample, self.target, self.reference, self.test
        ref_copies = copies_inputs(reference, target, sample)
        test_copies = copies_inputs(test_mode, target, sample)
        before = None
        if not (ref_copies and test_copies):
            try:
                before = sum([t._version for t in leaves])
            except RuntimeError:  # inference tensors: no version counter, so execute copies them
                ref = self.run_mode(reference, sample, leaves)
                test = self.run_mode(test_mode, sample, leaves) if ref.status == "ok" else ref
                return self._judge(entry, ref, test)
        compiling = self._test_compiling
        # read before either run: a reference that rejects the input leaves the test unrun, and nothing compiled
        compiles_before = compiling.compiles if compiling is not None else 0
        grad_was = torch.is_grad_enabled()
        start = test_start = time.monotonic()
        torch._C._set_grad_enabled(False)
        try:
            try:
                ref_out = reference.run(target, _private_copy(sample) if ref_copies else sample)
            except Exception as exc:
                ref = failed(reference, exc)
            else:
                ref = None if ref_copies or sum([t._version for t in leaves]) == before else wrote_to_input(target)
            if ref is not None:
                test = ref
            else:
                test_start = time.monotonic()
                try:
                    test_out = test_mode.run(target, _private_copy(sample) if test_copies else sample)
                except Exception as exc:
                    test = failed(test_mode, exc)
                else:
                    test = (None if test_copies or sum([t._version for t in leaves]) == before
                            else wrote_to_input(target))
        finally:
            torch._C._set_grad_enabled(grad_was)
            end = time.monotonic()
            if compiling is not None and compiling.compiles > compiles_before:  # the test run compiled
                self.tally.execute_s += test_start - start
                self._book_compile(end - test_start)
            else:
                self.tally.execute_s += end - start
        if compiling is not None and test is not ref:
            self.compiled_shapes.add(_shape_sig(entry))
        nonfinite = None
        if (ref is None and test is None and type(ref_out) is torch.Tensor and type(test_out) is torch.Tensor
                and self._compares_values and not self._sign_ambiguous and not test_out.requires_grad):
            # The common outcome, told before any Execution is built: two plain tensors, identical (as _judge
            # would find them: the value oracles pass identical outputs at once).
            nonfinite = _has_nonfinite(test_out)
            if _identical_leaf(ref_out, test_out, not nonfinite) and not ref_out.requires_grad:
                self.tally.nonfinite_outputs += nonfinite
                self.last_outputs = (ref_out, test_out)
                return "pass"
        if ref is None:
            ref = Execution("ok", output=detach_output(ref_out))
        if test is None:
            test = Execution("ok", output=detach_output(test_out))
        if self._sign_ambiguous:
            self.gauge_free(ref)
            if test is not ref:
                self.gauge_free(test)
        return self._judge(entry, ref, test, nonfinite)

    def _judge(self, entry: CorpusEntry, ref: Execution, test: Execution,
               nonfinite: bool | None = None) -> Finding | str:
        """The rest of `evaluate` once both modes ran (or the reference failed: `test` is `ref` then).
        `nonfinite`: whether the test output holds NaN/Inf, when the caller found out already."""
        oracle = self.spec.oracle
        self.last_outputs = (ref.output, None)
        if ref.status != "ok":
            self.tally.invalid_reasons.append(ref.error_text)
            return "skip"
        self.last_outputs = (ref.output, test.output)
        if test.status == "na":
            self.tally.na_reasons.append(str(test.error))
            return "na"
        if test.status == "exc":
            return confirm_exception(self, entry, test)
        if nonfinite is None:
            nonfinite = _has_nonfinite(test.output)
        if nonfinite:
            self.tally.nonfinite_outputs += 1
        if oracle == "crash" or oracle == "exception":
            return "pass"
        if oracle == "nan_inf":
            return check_nan_inf(self, entry, test)
        if identical_outputs(ref.output, test.output, test_finite=not nonfinite):
            return "pass"  # what the comparison would say (closeness 0, no notes): Campaign.compare
        return self._compared(entry, ref, test)

    # -- the loop ------------------------------------------------------------------------------
    def _compile_debt(self) -> bool:
        """Compiling has taken its share of the time: the next input must reuse compiled shapes."""
        if not self.compiles or not self.compiled_shapes:
            return False
        return self.tally.compile_s > COMPILE_SHARE * (time.monotonic() - self._started)

    def _next_entry(self, corpus: list[CorpusEntry], pending_seeds: list[int], iteration: int,
                    gen: torch.Generator) -> CorpusEntry | None:
        reuse = self._compile_debt()
        if pending_seeds and not reuse:
            index = pending_seeds.pop(0)
            return corpus[index]
        burst = self._burst
        if burst is not None:
            if burst[4] < len(burst[3]) and not (reuse and burst[1] not in self._value_mutators):
                return self._burst_child(burst)
            self._burst = None
        view: Sequence[CorpusEntry] = corpus
        if reuse:
            view = self._compiled_entries(corpus) or corpus
        weights = self._value_weights if reuse and self._value_mutators else self._mutator_weights
        for _attempt in range(64):  # some mutators do not apply to some inputs; only give up on none
            parent = view[self.selector.select(view, gen)]
            parent.picked += 1
            index = self._draw_mutator(weights, gen)
            mutator = self.mutators[index]
            step_seed = self._step_seed_base + 64 * iteration + _attempt  # distinct per step, one addition
            try:
                if self._bursts[index] > 1:  # Note [Mutation bursts]
                    children = mutator.mutate_burst(parent.sample, self._step_gen.manual_seed(step_seed))
                    if children:
                        self._burst = [parent, index, step_seed, children, 0]
                        return self._burst_child(self._burst)
                child = mutator.mutate(parent.sample, self._step_gen.manual_seed(step_seed))
            except Exception as exc:  # Note [Mutators that raise]
                self.tally.mutator_errors[f"{mutator.name}: {type(exc).__name__}"] += 1
                continue
            if child is not None:
                return self._child_entry(parent, index, child, (mutator.name, step_seed), str(step_seed))
        if pending_seeds:
            return corpus[pending_seeds.pop(0)]
        return None

    # Note [Mutators that raise]
    # Mutators meet whatever the seeds hold: quantized tensors (torch.zeros and torch.full have no quantized
    # kernels), odd dtypes, nested structures. A mutation that raises on its parent is one that does not apply to
    # it, as one that returns None: the loop tries another parent and mutator, the step is never recorded (so
    # replays never meet it), and the harness goes on instead of ending as an engine error. Each failure is counted
    # by mutator and exception type and reported in the evidence (`mutator_errors`), so a broken mutator shows.

    def _burst_child(self, burst: list[Any]) -> CorpusEntry:
        """The burst's next child as a corpus entry; its step is (mutator, seed, row)."""
        parent, index, step_seed, children, row = burst
        burst[4] = row + 1
        entry = self._child_entry(parent, index, children[row], (self.mutators[index].name, step_seed, row),
                                  f"{step_seed},{row}")
        # the arguments the burst made (views of its batch): the others are the parent's own tensors, kept as they
        # are (a strided, expanded or offset parent argument is part of what the child tests)
        theirs = parent.sample.args
        entry.meta["_burst_views"] = [i for i, a in enumerate(entry.sample.args)
                                      if i >= len(theirs) or a is not theirs[i]]
        return entry

    def _child_entry(self, parent: CorpusEntry, index: int, child: Sample, step: tuple[Any, ...],
                     step_tail: str) -> CorpusEntry:
        """The entry for `child` of `parent`, its recipe the parent's plus `step` (`step_tail`: the step's values
        after the mutator's name, as JSON)."""
        if not self._canonical_as_is:
            child = self.canonical(child)
        new = CorpusEntry(child, (parent.recipe[0], parent.recipe[1] + (step,)))
        if self._progress_encoded is not None:  # the recipe's steps as JSON: the parent's plus this step
            steps = parent.meta.get("_steps_json") or _steps_json(parent)
            new.meta["_steps_json"] = (f"{steps[:-1]}{',' if len(steps) > 2 else ''}"
                                       f"[{self._mutator_json[index]},{step_tail}]]")
        return new

    def _compiled_entries(self, corpus: list[CorpusEntry]) -> list[CorpusEntry]:
        """`[entry for entry in corpus if _shape_sig(entry) in self.compiled_shapes]`, kept up to date instead of
        rebuilt per input (Note [The hot loop]): the corpus only grows at its end and compiled_shapes only grows, so
        the list is extended by the entries added since, and rebuilt when a shape was compiled since."""
        known = self._compiled_view
        if known is None or known[0] is not corpus or known[2] != len(self.compiled_shapes):
            known = self._compiled_view = [corpus, 0, len(self.compiled_shapes), []]
        if known[1] < len(corpus):
            shapes = self.compiled_shapes
            known[3].extend([entry for entry in corpus[known[1]:] if _shape_sig(entry) in shapes])
            known[1] = len(corpus)
        return known[3]

    def _draw_mutator(self, weights: torch.Tensor, gen: torch.Generator) -> int:
        """An index drawn with probability proportional to `weights`: from the campaign's DrawStream, one buffered
        uniform draw placed on the weights' running sums (Note [The hot loop]); from any other generator, or for
        weights multinomial would reject (negative, non-finite, all zero: it raises), `torch.multinomial`."""
        known = self._weight_sums.get(id(weights))
        if known is None or known[0] is not weights:  # (an id is only reused once its tensor is gone)
            known = self._weight_sums[id(weights)] = (weights, *_running_sums(weights))
        _, sums, last = known
        if type(gen) is not DrawStream or not sums:
            return int(torch.multinomial(weights, 1, generator=gen))
        # The first index whose running sum exceeds the draw: a zero weight's sum equals the one before it, so it
        # is never drawn; the last positive weight's index bounds a product that rounded up to the total.
        return min(bisect.bisect_right(sums, gen.uniform() * sums[-1]), last)

    def run(self, *, budget_s: float | None, max_executions: int | None, min_inputs: int = 0) -> None:
        """Fuzz until the budget or max_executions; past the budget, go on for up to MIN_INPUTS_OVERRUN_S
        while fewer than `min_inputs` inputs have been compared (Note [Earned passes])."""
        if max_executions is None and budget_s is None:
            max_executions = DEFAULT_MAX_EXECUTIONS
        self._started = time.monotonic()
        deadline = self._started + budget_s if budget_s is not None else math.inf
        corpus = [CorpusEntry(s, (i, ())) for i, s in enumerate(self.seeds)]
        pending_seeds = list(range(len(self.seeds)))
        gen = DrawStream(_int_seed(self.spec.seed, 7))
        iteration = 0
        seeds_na = 0
        encoded = self._progress_encoded
        measures = getattr(self.selector, "measures", None)  # Note [Sampled coverage]; looked up once
        if not callable(measures):
            measures = None
        while True:
            if max_executions is not None and self.tally.executions >= max_executions:
                self.exit_reason = EXIT_MAX_EXECUTIONS
                return
            now = time.monotonic()
            if now >= deadline and not (self.tally.compared < min_inputs and now < max(
                    deadline, self._last_compile_end) + MIN_INPUTS_OVERRUN_S):
                self.exit_reason = EXIT_TIME
                return
            # A mode that applies to none of the seeds will not apply to their mutants either.
            if not pending_seeds and seeds_na == len(self.seeds):
                self.exit_reason = EXIT_NOT_APPLICABLE
                return
            entry = self._next_entry(corpus, pending_seeds, iteration, gen)
            iteration += 1
            if entry is None:
                self.exit_reason = EXIT_NO_CORPUS
                return
            if encoded is not None:
                encoded(iteration - 1, entry.recipe[0], entry.meta.get("_steps_json") or _steps_json(entry))
            elif self.progress is not None:
                self.progress({"iteration": iteration - 1, "seed_index": entry.recipe[0],
                               "steps": [list(s) for s in entry.recipe[1]]})
            self.last_outputs = (None, None)
            self._measured = bool(measures(entry)) if measures is not None else True
            outcome = self.evaluate(entry)
            self.tally.executions += 1
            if isinstance(outcome, Finding):
                self.tally.compared += 1
                self._keep(outcome)
                if outcome.verdict == V.CONFIRMED:
                    self.exit_reason = EXIT_CONFIRMED
                    return
                label = "fail"
            else:
                label = outcome
                if outcome in ("pass", "noise"):
                    self.tally.compared += 1
                    self.tally.passed += 1
                elif outcome == "skip":
                    self.tally.invalid_input += 1
                elif outcome == "na":
                    self.tally.not_applicable += 1
                    seeds_na += int(not entry.recipe[1])
            if self.selector.observe(entry, label, self.last_outputs):
                views = entry.meta.pop("_burst_views", None)
                if views:  # a burst child: its new arguments are views of the burst's batch until now
                    entry.sample = _owning(entry.sample, views)
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


def _shape_sig(entry: CorpusEntry) -> Any:
    """The structure of the entry's input as compiled code is keyed (structure_sig), worked out once per entry:
    under compile debt every input looks at every corpus entry's (Note [The hot loop])."""
    sig = entry.meta.get("_shape_sig")
    if sig is None:
        sig = entry.meta["_shape_sig"] = structure_sig(entry.sample.tree())
    return sig


def _burst_size(mutator: Mutator) -> int:
    """Children per pick of `mutator`: its `burst` where it makes bursts (mutate_burst), else 1."""
    burst = getattr(mutator, "burst", 1)
    return int(burst) if callable(getattr(mutator, "mutate_burst", None)) and int(burst) > 1 else 1


def _owning(sample: Sample, views: list[int]) -> Sample:
    """The sample with the arguments at `views` that are views into a larger storage (a burst's batch: contiguous
    rows) copied, so an entry the corpus keeps holds its own values, not its burst's (Note [Mutation bursts])."""
    args = list(sample.args)
    copied = False
    for i in views:
        a = args[i]
        if type(a) is torch.Tensor and a.untyped_storage().nbytes() > a.nbytes:
            args[i], copied = a.clone(), True
    return Sample(tuple(args), sample.kwargs, sample.ctor, sample.origin) if copied else sample


def _running_sums(weights: torch.Tensor) -> tuple[list[float], int]:
    """The running sums of `weights` as floats and the index of the last positive weight; ([], 0) where
    torch.multinomial would reject the weights (not a 1-D float tensor, a negative or non-finite weight, all zero)."""
    if weights.dim() != 1 or not weights.is_floating_point() or not bool(torch.isfinite(weights).all()) or bool(
            (weights < 0).any()) or not float(weights.sum()) > 0:
        return [], 0
    values = weights.double().tolist()
    return list(itertools.accumulate(values)), max(i for i, v in enumerate(values) if v > 0)


def _private_copy(sample: Sample) -> Sample:
    """The copy `execute` runs a mode on where the mode could write to its input (Note [Input copies]); plain tensor
    arguments (every compiled input of a plain call) are cloned without the tree walk, as clone_tree clones them."""
    args = sample.args
    if not sample.kwargs and all([type(a) is torch.Tensor and not a.requires_grad for a in args]):
        return Sample(tuple([a.clone() for a in args]), {}, sample.ctor, sample.origin)
    return Sample(*clone_tree(sample.tree()), ctor=sample.ctor, origin=sample.origin)


def _steps_json(entry: CorpusEntry) -> str:
    """The entry's recipe steps as JSON (json.dumps of [[name, seed], ...], compact), worked out once per entry."""
    steps = entry.meta["_steps_json"] = json.dumps([list(s) for s in entry.recipe[1]], separators=(",", ":"))
    return steps


_NUMPY_FINITE_DTYPES = (torch.float32, torch.float64)
_NUMPY_FINITE_MAX = 4096  # elements: past this, the sum (no temporary) is the cheaper way


def _has_nonfinite(out: Any) -> bool:
    """Whether a floating or complex leaf of `out` holds NaN or ±Inf. A finite sum of a floating tensor means
    every element is finite (an Inf or NaN makes every partial sum it enters Inf or NaN), one reduction where
    isfinite().all() takes two: only a sum that is not finite (a non-finite element, or finite ones overflowing)
    gets the elementwise check, itself one subtraction and one sum: x - x is exactly 0 for every finite x and NaN
    for ±Inf and NaN, and a sum of zeros cannot overflow (Note [The hot loop])."""
    for t in ((out,) if type(out) is torch.Tensor else tensor_leaves(out)):
        if t.is_floating_point():
            n = t.numel()
            if 0 < n <= _NUMPY_FINITE_MAX and t.dtype in _NUMPY_FINITE_DTYPES and not t.requires_grad:
                # A small float32/float64 output: numpy's isfinite in one call (half of the outputs of a fuzzed op
                # hold NaN or Inf, where the sum would need the check after it too: Note [The hot loop])
                try:
                    if not numpy.isfinite(t.numpy()).all():
                        return True
                    continue
                except (RuntimeError, TypeError):  # a tensor numpy cannot view: the sum below
                    pass
            if n and not math.isfinite(t.sum().item()) and (t - t).sum().item() != 0:
                return True
        elif t.is_complex() and not bool(torch.isfinite(t).all()):
            return True
    return False


def identical_outputs(ref: Any, test: Any, *, test_finite: bool = False) -> bool:
    """Both outputs are floating tensors (or equal-length tuples/lists of them) of one shape and dtype, equal
    element for element with NaN where NaN: compare_outputs would pass them with closeness 0 and no notes.
    Anything else (index or integer leaves, other structures, any difference) goes to the full comparison.
    `test_finite`: the caller knows every floating leaf of `test` is finite (no NaN to match), so torch.equal's
    answer is the answer and the NaN-aware checks after it are skipped (near-equal compiled outputs: Note [The hot
    loop])."""
    if isinstance(ref, torch.Tensor) and isinstance(test, torch.Tensor):
        return _identical_leaf(ref, test, test_finite)
    if type(ref) is not type(test) or type(ref) not in (tuple, list) or len(ref) != len(test) or not ref:
        return False
    return all(isinstance(r, torch.Tensor) and isinstance(t, torch.Tensor) and _identical_leaf(r, t, test_finite)
               for r, t in zip(ref, test))


_SAME_WIDTH_INT = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
                   torch.bfloat16: torch.int16}


def _identical_leaf(ref: torch.Tensor, test: torch.Tensor, test_finite: bool = False) -> bool:
    if (ref.layout != torch.strided or test.layout != torch.strided or ref.dtype != test.dtype
            or not ref.is_floating_point() or ref.shape != test.shape):
        return False
    if torch.equal(ref, test):
        return True
    if test_finite:  # no NaN in test: NaN where NaN is plain equality, which torch.equal just denied
        return False
    bits = _SAME_WIDTH_INT.get(ref.dtype)
    try:
        if bits is not None and torch.equal(ref.view(bits), test.view(bits)):
            return True  # the same bits: equal values and NaN where NaN (the common case of NaN outputs), one op
    except RuntimeError:  # a tensor that cannot be viewed as another dtype: the elementwise check below
        pass
    both_nan = ref.isnan() & test.isnan()
    return bool(both_nan.any()) and bool(((ref == test) | both_nan).all())
