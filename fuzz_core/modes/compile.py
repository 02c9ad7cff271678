"""`compile:<backend>`: torch.compile of the target, one compiled callable per call structure, reused across inputs.

Note [Proof of compilation]
A compiled mode compares nothing when dynamo leaves the target in eager: a frame it skips (a function under
torch._dynamo.disable, a code object past its recompile limit), or a graph break that leaves every op outside
the graphs. The mode therefore compiles through a thin recording backend that wraps the backend torch.compile
would use (the same object, built the same way) and counts the runs of compiled graphs holding at least one
op. A call during which no such graph ran raises NotApplicable("not compiled: ..."): that input is counted
as not applicable, never as a pass. Per harness (per mode instance) the mode also keeps dynamo's counters
(frames, graphs, ops captured, graph breaks with their reasons, inductor's extern/fallback kernels) for the
evidence (`CompileRecord`, evidence["compiled"]).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.base import Mode, NotApplicable, bound_callable
from fuzz_core.target import Target
from fuzz_core.tensors import map_tensors, split_tensors, structure_dims_sig, tensor_leaves

COMPILE_OPTIONS = ("dynamic", "mode", "fullgraph")
_COMPILED: dict[tuple[Any, ...], Any] = {}
_KNOWN_BACKENDS: set[str] = set()  # backend names list_backends has named (CompileMode.check)
_configured = False


def configure_dynamo() -> None:
    """Settings every differential run of compiled code needs (see false_alarms.md: RNG, recompiles)."""
    global _configured
    if _configured:
        return
    import torch._dynamo.config as dynamo_config
    import torch._inductor.config as inductor_config

    # Random ops must draw the same numbers as eager, or every random op is a false alarm.
    inductor_config.fallback_random = True
    # Compile once, run many: after the first recompilation for a new size, dynamo marks the sizes that
    # changed dynamic (automatic dynamic shapes), so later shape mutations reuse one dynamic graph.
    dynamo_config.automatic_dynamic_shapes = True
    # Each structure gets its own code object, but shapes of one structure still recompile; a silent
    # fall-back to eager after the limit would hide bugs, so allow many.
    dynamo_config.recompile_limit = 64
    dynamo_config.accumulated_recompile_limit = 4096
    _configured = True


# Note [Stale closure tensors]
# A first version rebuilt (args, kwargs) from a template that still held the first call's input
# tensors. torch 2.13's dynamo then bound later inputs to those captured tensors and returned results
# computed from stale values on every later call, for every backend, without recompiling. The
# template now holds index placeholders only (fuzz_core.tensors.split_tensors).
def _fresh_wrapper(fn: Any, rebuild: Any) -> Any:
    """A wrapper with its own code object, so dynamo caches (and limits) it separately per structure."""
    namespace: dict[str, Any] = {"_fn": fn, "_rebuild": rebuild}
    exec(compile("def _compiled_entry(*ts):\n    a, k = _rebuild(list(ts))\n    return _fn(*a, **k)\n",
                 "<transfuzz-compile>", "exec"), namespace)
    return namespace["_compiled_entry"]


# Note [Empty inputs in compiled code]
# A tensor with no elements has no values for its strides to place, yet dynamo guards on them, so every stride
# pattern of an empty input is a recompilation. Timed in a 20 s inductor harness on sigmoid (8x8 seeds): the
# mutators' empty tensors (zero-size slices of transposed, expanded and sliced parents: (8, 0) with strides
# (8, 1), (0, 1), (1, 0), ...) took 7 recompilations of 0.10-0.16 s each, beside the 4 kernel builds of the
# shapes that compute something. A compiled mode therefore takes an empty tensor as the contiguous empty tensor
# of its shape (canonicalize: both modes get that input, so what they compare is unchanged); each empty shape
# still compiles once, as its size specialisation is code of its own.
def _dense_empty(t: torch.Tensor) -> torch.Tensor:
    """`t` when it holds elements or is laid out contiguously, else the contiguous empty tensor of its shape."""
    if t.numel() or t.layout != torch.strided or t.is_quantized:
        return t
    dense = torch.empty(t.shape, dtype=t.dtype, device=t.device)
    if dense.stride() == t.stride():
        return t
    return dense.requires_grad_(t.requires_grad) if t.requires_grad and t.is_leaf else dense


_OP_NODES = ("call_function", "call_method", "call_module")


def _node_name(node: Any) -> str:
    target = node.target
    if node.op == "call_function":
        name = getattr(target, "__name__", None) or str(target)
        module = getattr(target, "__module__", None)
        return f"{module}.{name}" if module and not str(name).startswith(module) else str(name)
    return f"{node.op}:{target}"


class _RecordingBackend:
    """Note [Proof of compilation]: the real backend, plus a record of its graphs and of their runs."""

    def __init__(self, backend: str, mode: str | None, dynamic: bool | None) -> None:
        # Built as torch.compile builds it for a backend name (inductor honours `mode` the same way).
        if backend == "inductor":
            self.real: Any = torch._TorchCompileInductorWrapper(mode, None, dynamic)
        else:
            self.real = torch._TorchCompileWrapper(backend, mode, None, dynamic)
        self.__name__ = f"transfuzz_recording_{backend}"
        self.graphs = 0  # graphs handed to the backend
        self.op_graphs = 0  # of those, graphs holding at least one op
        self.graph_runs: list[tuple[str, ...]] = []  # op names of each compiled graph that ran (drained per call)

    def __call__(self, gm: Any, example_inputs: Any) -> Any:
        ops = tuple(_node_name(n) for n in gm.graph.nodes if n.op in _OP_NODES)
        compiled = self.real(gm, example_inputs)
        self.graphs += 1
        if not ops:
            return compiled
        self.op_graphs += 1
        runs = self.graph_runs

        def run(*args: Any, **kwargs: Any) -> Any:
            runs.append(ops)
            return compiled(*args, **kwargs)

        if hasattr(compiled, "_boxed_call"):
            run._boxed_call = compiled._boxed_call  # type: ignore[attr-defined]
        return run

    def reset(self) -> None:
        reset = getattr(self.real, "reset", None)
        if callable(reset):
            reset()


@dataclass
class _Compiled:
    fn: Any
    recorder: _RecordingBackend
    break_reasons: Counter = field(default_factory=Counter)  # graph breaks seen while compiling this callable


def _counters() -> dict[str, Any]:
    from torch._dynamo.utils import counters

    return {"frames_total": counters["frames"]["total"], "frames_ok": counters["frames"]["ok"],
            "graphs": counters["stats"]["unique_graphs"], "graph_ops": counters["stats"]["calls_captured"],
            "extern_kernels": counters["inductor"]["extern_calls"], "breaks": dict(counters["graph_break"])}


def _frames_total() -> int:
    """dynamo's count of frames it was asked to convert: it moves on every cache miss, before any tracing."""
    counters = _DYNAMO_COUNTERS[0]
    if counters is None:
        from torch._dynamo.utils import counters

        _DYNAMO_COUNTERS[0] = counters  # one object for the process (torch._dynamo.reset clears, never rebinds it)
    return counters["frames"]["total"]


_DYNAMO_COUNTERS: list[Any] = [None]


# Note [Counters per call]
# dynamo's counters (frames, graphs, ops captured, graph breaks, inductor's extern kernels) only move while dynamo
# converts a frame, and every conversion first adds one to counters["frames"]["total"] (convert_frame.ConvertFrame
# .__call__); a call served from dynamo's cache converts nothing. So a call books its counter deltas only when that
# count moved during it, against the counters as they were last read at the same count (`_SNAPSHOT`, read afresh
# when anything else in the process converted a frame in between): the common call reads one counter twice instead
# of copying all of them twice (Note [The hot loop] in fuzz_core/campaign.py).
_SNAPSHOT: list[Any] = [-1, None]  # [frames total when read, _counters() then]


def _counters_at(frames: int) -> dict[str, Any]:
    if _SNAPSHOT[0] != frames or _SNAPSHOT[1] is None:
        _SNAPSHOT[0], _SNAPSHOT[1] = frames, _counters()
    return _SNAPSHOT[1]


def _reason_line(reason: str) -> str:
    return (str(reason).strip().splitlines() or ["?"])[0][:160]


@dataclass
class CompileRecord:
    """What dynamo and the backend did over one harness's calls of a compiled mode (evidence["compiled"])."""

    backend: str
    calls: int = 0  # calls of the compiled callable
    compiled_calls: int = 0  # calls during which a compiled graph holding an op ran
    not_compiled_calls: int = 0  # calls that ran no compiled op: "not compiled", never compared
    frames_total: int = 0  # frames dynamo converted (first compilations and recompilations)
    frames_ok: int = 0
    graphs: int = 0  # graphs dynamo compiled (counters["stats"]["unique_graphs"])
    graph_ops: int = 0  # ops captured in those graphs
    graph_breaks: int = 0
    extern_kernels: int = 0  # inductor: ops run as extern / fallback ATen kernels inside compiled code
    break_reasons: Counter = field(default_factory=Counter)
    # how often each compiled graph (its op names) ran: one dict update per call, the op counts only when asked
    op_runs: dict[tuple[str, ...], int] = field(default_factory=dict)
    not_compiled_reasons: Counter = field(default_factory=Counter)

    def add(self, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
        """Book dynamo's counter deltas of one call; the graph-break reasons it added."""
        for key in ("frames_total", "frames_ok", "graphs", "graph_ops", "extern_kernels"):
            setattr(self, key, getattr(self, key) + max(0, after[key] - before[key]))
        added: list[str] = []
        for reason, count in after["breaks"].items():
            delta = count - before["breaks"].get(reason, 0)
            if delta > 0:
                self.graph_breaks += delta
                self.break_reasons[_reason_line(reason)] += delta
                added.extend([_reason_line(reason)] * delta)
        return added

    @property
    def ops(self) -> Counter:
        """Ops of the compiled graphs that ran, per graph run."""
        ops: Counter = Counter()
        for names, runs in self.op_runs.items():
            for name in names:
                ops[name] += runs
        return ops

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "calls": self.calls, "compiled_calls": self.compiled_calls,
                "not_compiled_calls": self.not_compiled_calls, "frames_total": self.frames_total,
                "frames_ok": self.frames_ok, "graphs": self.graphs, "graph_ops": self.graph_ops,
                "graph_breaks": self.graph_breaks, "extern_kernels": self.extern_kernels,
                "break_reasons": dict(self.break_reasons.most_common(5)),
                "ops": dict(self.ops.most_common(10)),
                "not_compiled_reasons": dict(self.not_compiled_reasons.most_common(3))}


def _not_compiled_reason(entry: _Compiled, added_breaks: list[str]) -> str:
    breaks = added_breaks or [reason for reason, _ in entry.break_reasons.most_common(1)]
    if breaks:
        return f"not compiled: dynamo ran the target outside compiled graphs (graph break: {breaks[0]})"
    if entry.recorder.graphs:
        return "not compiled: dynamo's graphs hold no op (the result was computed while tracing or in eager)"
    return "not compiled: dynamo compiled no graph (the frame was skipped)"


def plain_dims_sig(args: tuple[torch.Tensor, ...]) -> Any:
    """structure_dims_sig((args, {})) for plain tensor arguments, without the walk (Note [The hot loop])."""
    return (tuple, (tuple, *[(a.dtype, a.dim()) for a in args]), (dict,))


def compile_mode_of(mode: Any) -> CompileMode | None:
    """The compile mode a mode runs through: itself, or the forward of a `grad:compile:<backend>` mode."""
    for candidate in (mode, getattr(mode, "inner", None)):
        if isinstance(candidate, CompileMode):
            return candidate
    return None


class CompileMode(Mode):
    dispatch_observable = False

    # Compilations (first calls and recompilations) this mode has triggered: the campaign books the
    # time of a call that compiled as compile time, apart from execution time.
    compiles = 0

    @property
    def record(self) -> CompileRecord:
        """This mode instance's (one harness's) CompileRecord."""
        record = self.__dict__.get("_record")
        if record is None:
            record = self.__dict__["_record"] = CompileRecord(backend=self.backend)
        return record

    @property
    def backend(self) -> str:
        return self.name.split(":", 1)[1]

    def check(self, target: Target, sample: Sample) -> None:
        backend = self.backend
        if backend in _KNOWN_BACKENDS:  # a registered backend stays registered: looked up once (per input it cost
            return                      # more than the compiled call)
        from torch._dynamo.backends.registry import list_backends

        known = set(list_backends(exclude_tags=())) | {"eager", "aot_eager", "inductor"}
        if backend not in known:
            raise NotApplicable(f"no compile backend named {backend!r}")
        _KNOWN_BACKENDS.add(backend)

    def canonicalize(self, sample: Sample) -> Sample:
        """Empty tensors as contiguous ones (Note [Empty inputs in compiled code])."""
        args = sample.args
        if not sample.kwargs and all([type(a) is torch.Tensor for a in args]):  # the common call: plain tensors
            if all([a.numel() for a in args]):
                return sample
            return sample.with_tree((tuple(_dense_empty(a) for a in args), {}))
        if all([t.numel() for t in tensor_leaves(sample.tree())]):
            return sample
        return sample.with_tree(map_tensors(sample.tree(), _dense_empty))

    def run(self, target: Target, sample: Sample) -> Any:
        configure_dynamo()
        fn = bound_callable(target, sample)
        tree = sample.tree()
        # A tuple key (Note [The hot loop] in fuzz_core/campaign.py): mode, options, target, and the structure
        # without shapes (shapes recompile inside one compiled callable).
        options = self.__dict__.get("_options_key")
        if options is None or options[0] != self.options:  # the options' text, made again only if they changed
            options = self.__dict__["_options_key"] = (dict(self.options), repr(sorted(self.options.items())))
        args = sample.args
        if not sample.kwargs and all([type(a) is torch.Tensor for a in args]):
            # Plain tensor arguments: structure_dims_sig's value without the walk, the arguments as the leaves
            dims, tensors = plain_dims_sig(args), args
        else:
            dims, tensors = structure_dims_sig(tree), None
        key: tuple[Any, ...] = (self.name, options[1], target.api, id(fn), dims)
        entry = _COMPILED.get(key)
        if entry is not None:
            if tensors is None:
                tensors = tensor_leaves(tree)  # the order split_tensors gives
        else:
            tensors, rebuild = split_tensors(tree)
            kwargs = {k: self.options[k] for k in ("dynamic", "fullgraph") if k in self.options}
            recorder = _RecordingBackend(self.backend, self.options.get("mode"), self.options.get("dynamic"))
            entry = _COMPILED[key] = _Compiled(torch.compile(_fresh_wrapper(fn, rebuild), backend=recorder, **kwargs),
                                               recorder)
        record = self.record
        frames = _frames_total()
        runs = entry.recorder.graph_runs
        runs.clear()
        added: list[str] = []
        before = _counters_at(frames)  # the counters as last read, read again only if a frame was converted since
        try:
            out = entry.fn(*tensors)
        finally:
            after_frames = _frames_total()
            if after_frames != frames:  # dynamo converted a frame: book its counters (Note [Counters per call])
                self.compiles += 1
                after = _counters_at(after_frames)
                added = record.add(before, after)
                entry.break_reasons.update(added)
            record.calls += 1
        if not runs:  # Note [Proof of compilation]
            reason = _not_compiled_reason(entry, added)
            record.not_compiled_calls += 1
            record.not_compiled_reasons[reason] += 1
            raise NotApplicable(reason)
        record.compiled_calls += 1
        op_runs = record.op_runs
        for ops in runs:
            op_runs[ops] = op_runs.get(ops, 0) + 1
        runs.clear()
        return out

    def config(self) -> dict[str, Any]:
        import torch._inductor.config as inductor_config

        return {"backend": self.backend, **self.options, "fallback_random": inductor_config.fallback_random}

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        options = {k: self.options[k] for k in COMPILE_OPTIONS if k in self.options}
        kwargs = ", ".join(f"{k}={v!r}" for k, v in options.items() if k != "dynamic")
        extra = f", {kwargs}" if kwargs else ""
        # The fuzzer's compiled callable may have seen other shapes first, after which dynamo
        # recompiles with dynamic shapes; the script retries with dynamic=True (RETRY_DYNAMIC).
        return f'''
import torch._inductor.config
torch._inductor.config.fallback_random = True
COMPILE_DYNAMIC = {options.get("dynamic")!r}
RETRY_DYNAMIC = {"dynamic" not in options}

def run_mode(fn, args, kwargs):
    compiled = torch.compile(lambda *a, **k: fn(*a, **k), backend={self.backend!r}, dynamic=COMPILE_DYNAMIC{extra})
    return compiled(*args, **kwargs)
'''


def make_compile(name: str, options: dict) -> Mode:
    if ":" not in name:
        raise NotApplicable("compile needs a backend, e.g. compile:inductor")
    return CompileMode(name=name, options=options)
