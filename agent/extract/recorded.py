"""From a recording of what a repro ran (agent/extract/recording.py) to the facts of a bug pattern.

Note [Reading a recording]
Pure functions over typed data; nothing is run. The steps:

1. Names. Each recorded callable name becomes the public op it is, as data: ``torch._C._nn.gelu`` is
   ``torch.nn.functional.gelu``, ``torch._C._linalg.linalg_inv`` is ``torch.linalg.inv``, an ATen op
   ``torch.ops.aten.tanh.default`` is ``torch.tanh``, ``Tensor.add`` is ``torch.add``, a graph's
   ``_operator.mul`` is ``torch.mul``. A candidate counts only when ``fuzz_core.api_names`` accepts it.
2. Data flow. Tensors carry ids, so each call's inputs lead back to the calls that produced them (the
   latest producer before the call; an in-place op produces its input again; ``x.grad`` after
   ``backward`` is produced by that backward).
3. What was compared. The script's own comparisons (``allclose``, ``equal``, ``isclose``, ``==``,
   ``assert_close``, a difference ``a - b`` that is printed or reduced) give two sides; without one, the
   last two printed tensors of one shape do; else the values the script printed or read.
4. The API under test: among the ops that ran on both sides, the first whose recorded results differ
   beyond the looser side's dtype tolerance (the first diverging op); when none is known to differ, the
   most telling op that ran on both sides; with one side only, the most telling op behind the compared
   values; with no comparison at all (the script failed first), the most telling op the script ran.
   Creation, conversion, views, printing and comparisons are never it; arithmetic only when nothing else is.
5. Modes: what differs between the sides around that op (a compiled or scripted call, autocast, a
   float16/bfloat16 input where the other side has float32, a non-contiguous or channels_last input where
   the other side's is contiguous, gradients compared, a vmap, a CUDA device); with one side, the contexts
   around the op itself; NaN/Inf in its results with no mode is a NaN_Inf pattern.
6. Trigger: the op's input dtypes, special values (NaN, ±Inf, -0.0, denormals, huge and tiny
   magnitudes), shapes (zero-size, scalar, broadcast) and scalar parameters, as recorded.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field

from agent.extract.modes import EXCEPTION_SYMPTOM_KINDS, NAN_SYMPTOM_KINDS, NONFINITE_SYMPTOM_KINDS
from agent.extract.public_ops import C_MODULES, aten_leaf
from agent.extract.recording import Call, Recording, TensorMeta
from agent.patterns import KNOWN_MODES, BugPattern, Mode, Oracle, OracleKind, PatternKind, Trigger

# --- names --------------------------------------------------------------------------------------------------

_NAMESPACES = ("torch", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft", "torch.Tensor")
_OPERATORS = {"add": "add", "iadd": "add", "sub": "sub", "isub": "sub", "mul": "mul", "imul": "mul",
              "truediv": "div", "itruediv": "div", "floordiv": "floor_divide", "mod": "remainder", "pow": "pow",
              "matmul": "matmul", "neg": "neg", "abs": "abs", "eq": "eq", "ne": "ne", "lt": "lt", "le": "le",
              "gt": "gt", "ge": "ge", "and_": "bitwise_and", "or_": "bitwise_or", "xor": "bitwise_xor",
              "invert": "bitwise_not", "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
              "radd": "add", "rsub": "sub", "rmul": "mul", "rtruediv": "div", "rpow": "pow", "rmatmul": "matmul",
              "and": "bitwise_and", "or": "bitwise_or"}


def _allowed(name: str) -> bool:
    from fuzz_core.api_names import rejection_reason

    return rejection_reason(name) is None


def _leaf_candidates(leaf: str) -> list[str]:
    leaf = leaf.strip("_") if not (leaf.startswith("__") and leaf.endswith("__")) else leaf
    if not leaf or not leaf.replace("_", "").isalnum():
        return []
    out = []
    for _, module, prefix in C_MODULES:
        if prefix and leaf.startswith(prefix):
            out.append(module + leaf[len(prefix):])
    return out + [f"{namespace}.{leaf}" for namespace in _NAMESPACES]


@lru_cache(maxsize=8192)
def public_name(raw: str) -> str | None:
    """The public torch op a recorded name stands for, accepted by the allow-list; None when there is none."""
    if not raw or len(raw) > 200 or not raw.replace(".", "").replace("_", "").isalnum():
        return None
    parts = raw.split(".")
    if parts[0] in ("_operator", "operator") and len(parts) == 2:
        op = _OPERATORS.get(parts[1])
        return f"torch.{op}" if op and _allowed(f"torch.{op}") else None
    if raw.startswith("torch.Tensor.") and len(parts) == 3:
        method = parts[2]
        if method.startswith("__") and method.endswith("__"):
            op = _OPERATORS.get(method.strip("_"))
            return f"torch.{op}" if op and _allowed(f"torch.{op}") else None
        base = method[:-1] if method.endswith("_") and not method.endswith("__") else method
        for candidate in (f"torch.{base}", f"torch.nn.functional.{base}", f"torch.Tensor.{method}"):
            if _allowed(candidate):
                return candidate
        return None
    if raw.startswith(("torch.ops.aten.", "torch.ops.prims.")) and len(parts) >= 4:
        leaf = aten_leaf(parts[3])
        if leaf.endswith("_") and _allowed(f"torch.{leaf[:-1]}"):
            return f"torch.{leaf[:-1]}"
        return next((c for c in _leaf_candidates(leaf) if _allowed(c)), None)
    for prefix, module, strip in C_MODULES:
        if raw.startswith(prefix) and len(parts) == prefix.count(".") + 1:
            leaf = parts[-1]
            leaf = leaf[len(strip):] if strip and leaf.startswith(strip) else leaf
            candidate = module + leaf
            return candidate if _allowed(candidate) else None
    if raw.startswith("torch.nn.modules.") and len(parts) >= 5:  # a module class: torch.nn.<Class>
        candidate = f"torch.nn.{parts[-1]}"
        return candidate if _allowed(candidate) else None
    if any(p.startswith("_") for p in parts):
        return None
    return raw if raw.startswith("torch.") and _allowed(raw) else None


# --- what an op is --------------------------------------------------------------------------------------------

_CREATION = frozenset({
    "tensor", "as_tensor", "asarray", "from_numpy", "randn", "rand", "randint", "randn_like", "rand_like",
    "randint_like", "randperm", "normal", "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like",
    "empty_like", "empty_strided", "arange", "linspace", "logspace", "eye", "manual_seed", "seed", "bernoulli",
    "new_tensor", "new_zeros", "new_ones", "new_full", "new_empty", "uniform_", "normal_", "random_", "fill_",
    "zero_", "fill", "zero", "uniform", "random", "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_",
    "xavier_normal_", "constant_", "ones_", "zeros_", "trunc_normal_", "orthogonal_", "device", "Size",
    "get_default_dtype", "set_default_dtype", "is_tensor", "is_grad_enabled", "is_autocast_enabled",
    "scalar_tensor", "complex", "polar",
})
_CONVERSION = frozenset({
    "to", "type", "float", "double", "half", "bfloat16", "int", "long", "short", "bool", "byte", "char", "cpu",
    "cuda", "mps", "xpu", "numpy", "tolist", "item", "clone", "detach", "detach_", "requires_grad_", "retain_grad",
    "contiguous", "copy_", "data", "type_as", "pin_memory", "cfloat", "cdouble", "backward", "grad",
    "register_hook", "set_grad_enabled", "no_grad", "enable_grad", "__deepcopy__", "__reduce_ex__",
})
_VIEWS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "squeeze", "unsqueeze", "expand",
    "expand_as", "permute", "transpose", "t", "T", "mT", "H", "mH", "narrow", "select", "__getitem__",
    "__setitem__", "chunk", "split", "unbind", "as_strided", "movedim", "swapaxes", "swapdims", "real", "imag",
    "index_select", "stack", "cat", "concat", "concatenate", "broadcast_to", "repeat", "tile", "contiguous",
    "view_as_real", "view_as_complex", "unfold",
    # reading elements out: what is read is computed elsewhere
    "gather", "take", "take_along_dim", "index_select", "masked_select", "nonzero", "argwhere", "squeeze_",
})
_OBSERVE = frozenset({"__repr__", "__str__", "__format__", "item", "tolist", "numpy", "__bool__", "__float__",
                      "__int__", "__array__", "all", "any"})
_COMPARE = frozenset({"allclose", "equal", "isclose", "eq", "ne", "assert_close", "__eq__", "__ne__",
                      "dist"})
_DIFFERENCE = frozenset({"sub", "rsub", "__sub__", "__rsub__"})
# after a difference: |a - b|, its largest or summed value, is still the comparison
_REDUCE = frozenset({"abs", "max", "amax", "sum", "mean", "norm", "item", "square", "pow", "min", "div", "all",
                     "any", "__bool__", "logical_not", "nonzero", "count_nonzero", "argmax", "where", "isnan",
                     "isinf", "isfinite", "lt", "gt", "le", "ge", "std", "float", "double", "linalg_norm",
                     "vector_norm", "__repr__", "__format__", "tolist"})
_ARITHMETIC = frozenset({"add", "sub", "mul", "div", "neg", "rsub", "true_divide", "multiply", "subtract",
                         "divide", "abs", "sum", "mean", "max", "min", "amax", "amin", "square", "pow",
                         "isnan", "isinf", "isfinite", "where", "masked_fill", "clamp", "clip"})
_PLUMBING_NAMES = frozenset({"torch.compile", "torch.jit.trace", "torch.jit.script", "torch.testing.assert_close",
                             "torch.autograd.gradcheck", "torch.autograd.gradgradcheck", "torch.autograd.grad",
                             "torch.autograd.backward"})
_PSEUDO = frozenset({"compiled", "transform", "custom_op"})
MAX_OBSERVED = 24  # printed values paired with each other (the pairs grow with the square)
SMALL_TENSOR = 64  # elements: a tensor this small was likely written out by hand
# calls that change their first argument and return something else (None)
_MUTATORS = frozenset({"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__"})


def leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1]


# spellings of one computation: what ran on one side as ``x @ y`` may run as ``mm`` inside a traced graph
_SAME_OP = {"mm": "matmul", "bmm": "matmul", "mv": "matmul", "dot": "matmul", "addmm": "linear",
            "hardtanh": "relu6", "conv1d": "convolution", "conv2d": "convolution", "conv3d": "convolution",
            "conv": "convolution", "true_divide": "div", "divide": "div", "multiply": "mul", "subtract": "sub",
            "__setitem__": "index_put",  # x[i] = v runs aten::index_put_
            # the operator module's names, as a compiled graph lists the script's ``+``, ``+=``, ``x[i] = v``
            "setitem": "index_put", "iadd": "add", "isub": "sub", "imul": "mul", "itruediv": "div", "truediv": "div",
            "imatmul": "matmul"}


def op_key(name: str) -> str:
    """What an op computes, whatever its namespace or spelling (for matching the two sides' ops)."""
    parts = name.split(".")
    if name.startswith("torch.ops.") and len(parts) >= 4:  # torch.ops.aten.<op>.<overload>
        short = aten_leaf(parts[3]).lower()
    else:
        short = leaf(name).lower()
    for _, _, strip in C_MODULES:  # linalg_inv, special_erf: the C module's own prefix
        if strip and short.startswith(strip):
            short = short[len(strip):]
    short = short[:-1] if short.endswith("_") and not short.endswith("__") else short
    return _SAME_OP.get(short, short)


def _raw_leaf(call: Call) -> str:
    """The op's own name without namespace, ATen overload or C module prefix."""
    parts = call.name.split(".")
    if call.name.startswith("torch.ops.") and len(parts) >= 4:
        return parts[3].lstrip("_")
    name = parts[-1]
    for _, _, strip in C_MODULES:
        if strip and name.startswith(strip):
            return name[len(strip):]
    return name


def score(name: str) -> float:
    """How telling an op is as "the API under test": 0 never, 1 arithmetic, 3 anything else."""
    short = leaf(name)
    base = short[:-1] if short.endswith("_") and not short.endswith("__") else short
    if name in _PLUMBING_NAMES or short in _CREATION or base in _CONVERSION or short in _CONVERSION \
            or short in _OBSERVE \
            or short in _COMPARE or name.startswith(("torch.testing.", "torch.jit.", "torch.autograd.",
                                                    "torch.cuda.", "torch.backends.", "torch.func.")):
        return 0.0
    if base in _VIEWS or short in _VIEWS:
        return 0.5
    if base in _ARITHMETIC:
        return 1.0
    return 3.0


# --- the facts ------------------------------------------------------------------------------------------------


class RecordedFacts(BaseModel):
    """What a recording says about the report's bug, as pattern parts and the evidence for each."""

    model_config = ConfigDict(frozen=True)

    run_status: str
    api: str | None = None
    api_candidates: list[str] = Field(default_factory=list)
    kind: PatternKind | None = None
    reference_mode: str | None = None
    test_mode: str | None = None
    test_options: dict[str, bool | int | float | str] = Field(default_factory=dict)
    modes_seen: list[str] = Field(default_factory=list)
    trigger: Trigger | None = None
    oracle: Oracle | None = None
    compared: str | None = None  # how the script compared: "assert_close", "printed two values", ...
    diverged: bool | None = None  # the compared values differ as recorded (None: unknown)
    first_divergence: str | None = None  # the first op whose results differ between the sides
    device_only: list[str] = Field(default_factory=list)  # devices the script needed and this machine lacks
    mode_basis: str | None = None  # "sides" (the compared sides differ by it), "context", "nan", "device"
    ran: list[str] = Field(default_factory=list)  # the public ops the script ran, in order (at most 60)
    evidence: list[str] = Field(default_factory=list)
    calls: int = 0

    def summary(self) -> str:
        """One line for logs and the LLM's data block."""
        parts = [f"ran: {self.run_status}", f"{self.calls} torch calls"]
        if self.api:
            parts.append(f"api {self.api}")
        if self.kind:
            parts.append(f"{self.kind.value} ({self.reference_mode} vs {self.test_mode})")
        if self.compared:
            parts.append(f"compared by {self.compared}")
        if self.first_divergence:
            parts.append(f"first diverging op {self.first_divergence}")
        return "; ".join(parts)


@dataclass
class _Graph:
    """Which call produced each tensor, and the calls behind a value."""

    calls: list[Call]
    by_index: dict[int, Call] = field(default_factory=dict)
    producers: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))

    def __post_init__(self) -> None:
        for call in self.calls:
            self.by_index[call.i] = call
            made = call.outputs()
            if leaf(call.name) in _MUTATORS and call.args and call.args[0].tensor is not None:
                made = [call.args[0].tensor, *made]  # x[i] = v: x is made again, from x and v
            for tensor in made:
                self.producers[tensor.id].append(call.i)

    def producer(self, tensor_id: int, before: int) -> int | None:
        found = [i for i in self.producers.get(tensor_id, ()) if i < before]
        return found[-1] if found else None

    def ancestors(self, tensor_ids: Iterable[int], before: int, limit: int = 5000) -> list[int]:
        """Indices of the calls the given tensors (as they were just before call `before`) came from."""
        seen: set[int] = set()
        stack = [(t, before) for t in tensor_ids]
        visited: set[tuple[int, int]] = set()
        while stack and len(seen) < limit:
            tensor_id, at = stack.pop()
            if (tensor_id, at) in visited:
                continue
            visited.add((tensor_id, at))
            index = self.producer(tensor_id, at)
            if index is None or index in seen:
                continue
            seen.add(index)
            call = self.by_index[index]
            stack.extend((t.id, index) for t in call.inputs())
            if leaf(call.name) == "grad" and call.kind == "getter":  # x.grad: from the backward before it
                backward = self._backward_before(index)
                if backward is not None and backward not in seen:
                    seen.add(backward)
                    stack.extend((t.id, backward) for t in self.by_index[backward].inputs())
        return sorted(seen)

    def _backward_before(self, index: int) -> int | None:
        for call in reversed(self.calls):
            if call.i < index and call.name in ("torch.Tensor.backward", "torch.autograd.backward"):
                return call.i
        return None


@dataclass
class _Side:
    label: str
    calls: list[Call]  # the calls behind this side's value, in order
    values: list[TensorMeta]  # the compared tensors themselves


def _members(side: _Side) -> list[tuple[str, Call]]:
    """(public op, call) for every op that ran for this side, the ops inside compiled/traced calls included."""
    out: list[tuple[str, Call]] = []
    for call in side.calls:
        if call.kind in _PSEUDO:
            for inner in call.inner or ():
                name = public_name(inner)
                if name is not None:
                    out.append((name, call))
            continue
        name = public_name(call.name)
        if name is not None:
            out.append((name, call))
    return out


def _tolerance(dtypes: Iterable[str]) -> tuple[float, float]:
    """(rtol, atol) of the loosest dtype (torch.testing.assert_close's defaults)."""
    table = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
             "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}
    found = [table[d] for d in dtypes if d in table] or [(1.3e-6, 1e-5)]
    return max(r for r, _ in found), max(a for _, a in found)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if value in ("nan", "inf", "-inf"):
        return float(value)
    return None


def _values_differ(a: TensorMeta, b: TensorMeta) -> bool | None:
    """Whether two recorded results differ (None: not enough recorded to tell)."""
    if a.stats is None or b.stats is None:
        return None
    if a.shape != b.shape:
        return None  # another shape: another call, not the same op under two modes
    sa, sb = a.stats, b.stats
    if (sa.nan, sa.posinf, sa.neginf) != (sb.nan, sb.posinf, sb.neginf):
        return True
    rtol, atol = _tolerance([a.dtype, b.dtype])
    pairs = list(zip(sa.sample, sb.sample)) + [(sa.max_abs, sb.max_abs), (sa.mean, sb.mean)]
    known = False
    for x, y in pairs:
        fx, fy = _number(x), _number(y)
        if fx is None or fy is None:
            continue
        known = True
        if math.isnan(fx) or math.isnan(fy):
            if math.isnan(fx) != math.isnan(fy):
                return True
            continue
        if math.isinf(fx) or math.isinf(fy):
            if fx != fy:
                return True
            continue
        if abs(fx - fy) > atol + rtol * max(abs(fx), abs(fy)) * 4:  # four times: the statistics sum errors up
            return True
    return False if known else None


class _Reader:
    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.calls = recording.calls
        self.graph = _Graph(self.calls)
        self.evidence: list[str] = []

    # --- what was compared ---------------------------------------------------------------------------------

    def _side(self, label: str, values: list[TensorMeta], before: int) -> _Side:
        indices = self.graph.ancestors([v.id for v in values], before)
        return _Side(label, [self.graph.by_index[i] for i in indices], values)

    def _leads_to_observation(self, call: Call) -> bool:
        """Whether the result of `call` reaches, through reductions only (abs, max, sum, ...), something the
        script printed, read, asserted or compared."""
        frontier = {t.id for t in call.outputs()}
        for later in self.calls:
            if later.i <= call.i or not frontier or not later.own:
                continue
            if frontier & {t.id for t in later.inputs()}:
                short = _raw_leaf(later)
                if short in _OBSERVE or short in _COMPARE:
                    return True
                if short in _REDUCE and not (short == "div" and len(later.inputs()) < 2):
                    # (a - b) / |b| is a relative error; (f(x + h) - f(x - h)) / (2 * h) is a difference quotient
                    frontier |= {t.id for t in later.outputs()}
        return False

    def _is_difference(self, call: Call) -> bool:
        """``a - b`` of two tensors of one shape whose result is only reduced and then printed or checked."""
        if _raw_leaf(call) not in _DIFFERENCE:
            return False
        tensors = call.inputs()
        return len(tensors) >= 2 and tensors[0].shape == tensors[1].shape and self._leads_to_observation(call)

    def common(self, sides: list[_Side]) -> list[str]:
        """Telling ops that ran for both sides, each side through a call of its own, in the first side's order."""
        if len(sides) != 2:
            return []
        a, b = (_members(s) for s in sides)
        calls_a: dict[str, set[int]] = defaultdict(set)
        calls_b: dict[str, set[int]] = defaultdict(set)
        names: dict[str, tuple[str, bool]] = {}  # op key -> (name to report, seen inside a compiled call)
        for members, calls in ((a, calls_a), (b, calls_b)):
            for name, call in members:
                key = op_key(name)
                calls[key].add(call.i)
                if key not in names or (names[key][1] and call.kind not in _PSEUDO):  # an eager call's name wins
                    names[key] = (name, call.kind in _PSEUDO)
        return [names[k][0] for k in calls_a if k in calls_b and score(names[k][0]) > 0 and calls_a[k] - calls_b[k]
                and calls_b[k] - calls_a[k]]

    def _quality(self, sides: list[_Side], failed: bool, at: int) -> tuple[int, int, float, int]:
        """How good a pair of sides is as "the comparison": failed, a telling op on both sides, its score, late."""
        common = self.common(sides)
        best = max((score(n) for n in common), default=0.0)
        return (int(failed), int(best >= 1), best, -at)  # the first comparison: later ones are diagnostics

    def comparison(self) -> tuple[str, list[_Side], Call | None]:
        """How the script compared, the sides, and the comparing call (None when printed or read)."""
        best: tuple[tuple[int, int, float, int], str, list[_Side], Call | None] | None = None
        for call in self.calls:
            if not call.own or call.kind == "aten" or len(call.inputs()) < 2:
                continue
            if _raw_leaf(call) in _COMPARE or self._is_difference(call):
                first, second = call.inputs()[:2]
                sides = [self._side("first", [first], call.i), self._side("second", [second], call.i)]
                failed = (call.error is not None and "AssertionError" in call.error) or (
                    call.out is not None and call.out.type == "bool" and call.out.value is False)
                quality = self._quality(sides, failed, call.i)
                if best is None or quality > best[0]:
                    best = (quality, _raw_leaf(call), sides, call)
        if best is not None and (best[0][1] or best[0][0]):
            return best[1], best[2], best[3]
        observed = self._observed_values()[:MAX_OBSERVED]
        pairs: list[tuple[tuple[int, int, float, int], list[_Side]]] = []
        for x in range(len(observed)):
            for y in range(x + 1, len(observed)):
                (a, at_a), (b, at_b) = observed[x], observed[y]
                if a.shape != b.shape or a.id == b.id:
                    continue
                sides = [self._side("first", [a], at_a), self._side("second", [b], at_b)]
                pairs.append((self._quality(sides, False, at_b), sides))
        if pairs:
            quality, sides = max(pairs, key=lambda p: p[0])
            if quality[1]:
                return "printed two values", sides, None
        if best is not None:
            return best[1], best[2], best[3]
        if observed:
            values = [v for v, _ in observed]
            return "printed values", [self._side("printed", values, max(i for _, i in observed) + 1)], None
        return "", [], None

    def _observed_values(self) -> list[tuple[TensorMeta, int]]:
        """Tensors the script printed or read (print, f-strings, item, tolist, numpy, bool), each at its last read."""
        seen: dict[int, tuple[TensorMeta, int]] = {}
        for call in self.calls:
            if call.own and _raw_leaf(call) in _OBSERVE and call.args and call.args[0].tensor is not None:
                tensor = call.args[0].tensor
                seen[tensor.id] = (tensor, call.i)
        return sorted(seen.values(), key=lambda v: v[1])

    # --- the op under test ---------------------------------------------------------------------------------

    def choose(self, sides: list[_Side]) -> tuple[str | None, list[str], str | None]:
        """(API, ranked candidates, first diverging op) from the sides, or from every op without them."""
        union = [m for side in sides for m in _members(side)]
        if len(sides) == 2:
            a, b = (_members(s) for s in sides)
            common = self.common(sides)
            first = self._first_divergence(a, b, common)
            if first is not None:
                self.evidence.append(f"{first} is the first op whose recorded results differ between the sides")
                return first, _ranked(common), first
            best_union = max((score(n) for n, _ in union), default=0.0)
            if common and max(score(n) for n in common) >= best_union:
                # an op whose results are recorded equal on both sides is not where they part; of the rest, the
                # one nearest the comparison (the layers before it mostly feed it)
                suspects = [n for n in common if not self._agree(a, b, n)] or common
                ranked = _ranked(suspects, latest_first=True)
                ranked += [n for n in _ranked(common) if n not in ranked]
                self.evidence.append(f"{ranked[0]} ran on both sides of the comparison")
                return ranked[0], ranked, None
        if not union:  # nothing compared: what the script itself ran
            union = _members(_Side("all", [c for c in self.calls if c.own or c.kind in _PSEUDO], []))
            if union:
                self.evidence.append("no comparison was recorded: the most telling op the script ran")
        # printed values: the first printed is the report's result, later ones its references; with nothing
        # compared, the op the script reached last (where it failed, or what it ends with)
        # (one printed value: the op nearest the print made it, its inputs were set up before)
        ranked = _ranked([n for n, _ in union], latest_first=len(sides) != 1 or len(sides[0].values) == 1)
        if ranked and score(ranked[0]) > 0:
            if sides:
                self.evidence.append(f"{ranked[0]} computed the compared values")
            return ranked[0], ranked, None
        return None, ranked, None

    def _agree(self, a: list[tuple[str, Call]], b: list[tuple[str, Call]], name: str) -> bool:
        """Whether the op's results are recorded and equal within tolerance on both sides."""
        calls_a = [c for n, c in a if op_key(n) == op_key(name) and c.kind not in _PSEUDO]
        calls_b = [c for n, c in b if op_key(n) == op_key(name) and c.kind not in _PSEUDO]
        pairs = [(ca, cb) for ca, cb in zip(calls_a, calls_b) if ca.i != cb.i and ca.outputs() and cb.outputs()]
        return bool(pairs) and all(_values_differ(ca.outputs()[0], cb.outputs()[0]) is False for ca, cb in pairs)

    def _first_divergence(self, a: list[tuple[str, Call]], b: list[tuple[str, Call]], common: list[str]) -> str | None:
        for name in common:  # in side a's order: the earliest op first
            calls_a = [c for n, c in a if op_key(n) == op_key(name) and c.kind not in _PSEUDO]
            calls_b = [c for n, c in b if op_key(n) == op_key(name) and c.kind not in _PSEUDO]
            if not calls_a or not calls_b:
                continue
            for ca, cb in zip(calls_a, calls_b):
                if ca.i == cb.i:
                    continue
                outs_a, outs_b = ca.outputs(), cb.outputs()
                if outs_a and outs_b and _values_differ(outs_a[0], outs_b[0]):
                    return name
        return None

    # --- modes ---------------------------------------------------------------------------------------------

    def instances(self, api: str) -> list[Call]:
        found = []
        for call in self.calls:
            if call.kind in _PSEUDO:
                continue
            if public_name(call.name) == api:
                found.append(call)
        return found

    def _modes_of(self, calls: Iterable[Call], api: str | None) -> dict[str, dict[str, Any]]:
        """Modes seen around `api` in these calls (all of them when api is None), with their options."""
        modes: dict[str, dict[str, Any]] = {}
        for call in calls:
            if call.kind in _PSEUDO:
                inner = {op_key(n) for n in call.inner or ()}
                if api is not None and op_key(api) not in inner and call.name != "torch.autograd.gradcheck":
                    continue
                if call.name == "torch.compile":
                    modes.setdefault(self._compile_mode(call), self._compile_options(call))
                elif call.name == "torch.jit.trace":
                    modes.setdefault("jit.trace", {})
                elif call.name == "torch.jit.script":
                    modes.setdefault("jit.script", {})
                elif call.name == "torch.func.vmap":
                    modes.setdefault("vmap", {})
                elif call.name in ("torch.autograd.gradcheck", "torch.autograd.gradgradcheck") \
                        or call.name.startswith(("torch.func.grad", "torch.func.jac", "torch.func.vjp",
                                                 "torch.func.hessian")):
                    modes.setdefault("grad", {})
                continue
            if call.emulated is not None:  # asked for cuda or mps, ran on the CPU here (Note [CUDA on the CPU])
                # the accelerator-vs-cpu pair; a device other than cuda stays an option (Note [Device-only reports])
                modes.setdefault("device:cuda", {} if call.emulated == "cuda" else {"device": call.emulated})
            if api is not None and public_name(call.name) != api:
                continue
            # Note [Variants in a recording]: the op's in-place spelling or its out= form on one side only
            if api is not None and _raw_leaf(call).endswith("_") and not _raw_leaf(call).endswith("__"):
                modes.setdefault("variant:inplace", {})
            if api is not None and "out" in call.kwargs and call.kwargs["out"].tensor is not None:
                modes.setdefault("variant:out", {})
            for ctx in call.ctx:
                if ctx.startswith("autocast:") and ctx.count(":") == 2:
                    dtype = ctx.rsplit(":", 1)[1]
                    if f"autocast:{dtype}" in KNOWN_MODES:
                        modes.setdefault(f"autocast:{dtype}", {})
                elif ctx == "gradcheck" or ctx == "gradgradcheck":
                    modes.setdefault("grad", {})
                elif ctx == "func.vmap":
                    modes.setdefault("vmap", {})
            for tensor in call.inputs():
                if tensor.dtype in ("float16", "bfloat16"):
                    modes.setdefault(f"dtype:{tensor.dtype}", {})
                if tensor.device.startswith("cuda"):
                    modes.setdefault("device:cuda", {})
                if tensor.channels_last and tensor.contiguous is False:
                    modes.setdefault("layout:channels_last", {})
                elif tensor.contiguous is False and tensor.numel > 1:
                    modes.setdefault("layout:noncontiguous", {})
        return modes

    def _compile_mode(self, call: Call) -> str:
        ctx = next((c for c in reversed(call.ctx + self._ctx_of_pseudo(call)) if c.startswith("compile:")), "")
        backend = ctx.split(":", 1)[1] if ctx else "inductor"
        name = f"compile:{backend}"
        return name if name in KNOWN_MODES else "compile:inductor"

    def _ctx_of_pseudo(self, call: Call) -> list[str]:
        event = self._compile_event(call)
        return [f"compile:{event.detail.get('backend')}"] if event is not None else []

    def _compile_event(self, call: Call) -> Any:
        events = [e for e in self.recording.events if e.type == "compile" and e.at <= call.i]
        return events[-1] if events else None

    def _compile_options(self, call: Call) -> dict[str, Any]:
        event = self._compile_event(call)
        if event is None:
            return {}
        options: dict[str, Any] = {}
        for key in ("fullgraph", "dynamic"):  # never ``mode``: the formal notation's own key (modes.py, mode_pair)
            value = event.detail.get(key)
            if isinstance(value, bool | str) and value not in ("", None) and not (key == "fullgraph" and not value):
                options[key] = value
        return options

    def devices_missing(self) -> list[str]:
        """Devices the script asked for and this machine does not have (a call that failed on them)."""
        found: list[str] = []
        for call in self.calls:
            if call.error is None:
                continue
            text = call.error.lower()
            wanted = [a.value for a in [*call.args, *call.kwargs.values()] if a.type in ("device", "str")
                      and isinstance(a.value, str)]
            for device in ("cuda", "mps", "xpu"):
                if leaf(call.name) == device or any(str(w).startswith(device) for w in wanted) or \
                        (device in text and ("not compiled" in text or "not available" in text)):
                    found.append(device)
        found.extend(self.recording.emulated)
        raised = self.recording.exception
        if raised is not None:
            for device in ("cuda", "mps", "xpu"):
                if raised.where.startswith(f"torch/{device}/"):
                    found.append(device)
        return list(dict.fromkeys(found))


def _ranked(names: Iterable[str], *, latest_first: bool = False) -> list[str]:
    """Names by how telling they are; ties by order (first seen, or last seen with latest_first)."""
    names = list(names)
    order = list(dict.fromkeys(reversed(names) if latest_first else names))
    return sorted(order, key=lambda n: -score(n))


_MODE_ORDER = ("compile:", "jit.", "grad", "vmap", "autocast:", "dtype:", "layout:", "device:", "variant:")
# Note [Variants in a recording]
# ``torch.clamp(a, ...)`` on one side and ``b.clamp_(...)`` or ``torch.cumsum(x, 0, out=buf)`` on the other is a
# variant comparison (functional vs in-place / out=), and only then: a mode of the sides, never of the context (an
# in-place call that merely prepares an input, ``x.add_(1)``, says nothing), and last in the order, so a side
# that also differs by device, dtype or compilation is read as that.


def _pick_mode(modes: Iterable[str]) -> str | None:
    modes = list(modes)
    for prefix in _MODE_ORDER:
        for mode in modes:
            if mode.startswith(prefix):
                return mode
    return None


def _kind_of(mode: str) -> PatternKind | None:
    from agent.extract.modes import kind_of

    return kind_of(mode)


def _special_values(tensors: Iterable[TensorMeta]) -> list[str]:
    found: list[str] = []
    for tensor in tensors:
        stats = tensor.stats
        if stats is None:
            continue
        # NaN and infinities never come out of a random generator: they are the script's doing; tiny, huge,
        # -0.0 and denormal values count only in a tensor small enough to have been written by hand
        written = tensor.numel <= SMALL_TENSOR
        low = tensor.dtype in ("float16", "bfloat16")
        max_abs, min_abs = _number(stats.max_abs), _number(stats.min_abs)
        for flag, name in ((stats.nan > 0, "nan"), (stats.posinf > 0, "inf"), (stats.neginf > 0, "-inf"),
                           (written and stats.negzero, "-0.0"), (written and stats.denormal, "denormal"),
                           (written and max_abs is not None and max_abs >= (1e4 if low else 1e8), "huge"),
                           (written and min_abs is not None and 0 < min_abs <= (1e-6 if low else 1e-30), "tiny")):
            if flag and name not in found:
                found.append(name)
    return found


_SKIP_PARAMS = {"dtype", "device", "out", "requires_grad", "layout", "memory_format", "generator", "input", "self",
                "pin_memory", "non_blocking", "copy"}


def _params(call: Call) -> dict[str, str]:
    """The call's scalar parameters by name, those equal to the function's default left out."""
    given: list[tuple[str, Any]] = []
    names = call.arg_names or []
    for position, arg in enumerate(call.args):
        if position < len(names) and arg.type != "tensor":
            given.append((names[position], arg))
    given += list(call.kwargs.items())
    params: dict[str, str] = {}
    for key, arg in given:
        if key in _SKIP_PARAMS or not key.isidentifier():
            continue
        text = arg.literal()
        default = call.arg_defaults.get(key)
        if text is not None and not (default is not None and default.literal() == text):
            params[key] = text
    return params


def _shape_conditions(call: Call) -> list[str]:
    tensors = call.inputs()
    found: list[str] = []
    if any(t.numel == 0 for t in tensors):
        found.append("zero_size")
    if any(not t.shape for t in tensors):
        found.append("scalar")
    if any(t.expanded for t in tensors) or len({tuple(t.shape) for t in tensors if t.shape}) > 1 and \
            _broadcasts([t.shape for t in tensors if t.shape]):
        found.append("broadcast")
    if any(t.numel >= 1_000_000 for t in tensors):
        found.append("large")
    return found


def _broadcasts(shapes: list[list[int]]) -> bool:
    """Shapes that differ yet broadcast together (as an elementwise op's inputs do)."""
    width = max(len(s) for s in shapes)
    padded = [[1] * (width - len(s)) + list(s) for s in shapes]
    for sizes in zip(*padded):
        real = {s for s in sizes if s != 1}
        if len(real) > 1:
            return False
    return True


def derive(recording: Recording, run_status: str | None = None) -> RecordedFacts:
    """The pattern facts a recording supports (see Note [Reading a recording])."""
    reader = _Reader(recording)
    status = run_status or recording.status
    compared, sides, comparing = reader.comparison()
    api, ranked, first = reader.choose(sides)
    missing = reader.devices_missing()
    own = [c for c in reader.calls if c.own or c.kind in _PSEUDO]
    modules = [public_name(c.module) for c in own if c.module]
    # an indexed write runs index_put_ though the recorder sees only the operator: listed as ran (so a text that
    # names index_put_ keeps it), never chosen as the op under test (setup writes such as x[0] = nan are common)
    writes = ["torch.Tensor.index_put_" for c in own if c.name == "torch.Tensor.__setitem__"]
    ran = list(dict.fromkeys([n for n, _ in _members(_Side("all", own, []))] + [m for m in modules if m] + writes))
    base = dict(run_status=status, api_candidates=ranked[:8], compared=compared or None, device_only=missing,
                calls=recording.calls_total, ran=ran[:60])
    if api is None:
        return RecordedFacts(**base, evidence=reader.evidence + ["no torch op under test was recorded"])
    instances = reader.instances(api)
    # modes: what differs between the sides around the op, else the contexts around the op itself
    seen_all = reader._modes_of(reader.calls, None)
    test_mode: str | None = None
    basis: str | None = None
    options: dict[str, Any] = {}
    if len(sides) == 2:
        modes_a = reader._modes_of(sides[0].calls, api)
        modes_b = reader._modes_of(sides[1].calls, api)
        differ = {m: o for m, o in {**modes_a, **modes_b}.items() if (m in modes_a) != (m in modes_b)}
        for variant in [m for m in differ if m.startswith("variant:")]:
            # Note [Variants in a recording]: the other side must run the op's plain form (``y[i] += v`` runs add_
            # on one side of a compile comparison whose other side runs no eager add at all)
            other = sides[1] if variant in modes_a else sides[0]
            if not any(_plain_form(c, api) for c in other.calls):
                differ.pop(variant)
        if any(_gradients(side) for side in sides):  # autograd against numbers, or against another autograd
            differ.setdefault("grad", {})
        test_mode = _pick_mode(differ)
        options = differ.get(test_mode, {}) if test_mode else {}
        if test_mode:
            basis = "sides"
            reader.evidence.append(f"the sides differ by {test_mode}")
    if test_mode is None:
        around = reader._modes_of([c for s in sides for c in s.calls] or reader.calls, api)
        if any(c.name == "torch.autograd.gradcheck" for c in reader.calls) or any(_gradients(s) for s in sides):
            around.setdefault("grad", {})
        # a transposed or sliced input on one side only is a layout comparison; with no other side, a view is
        # how the script spelled its input (x @ x.T), not a mode
        around.pop("layout:noncontiguous", None)
        around.pop("variant:inplace", None)  # Note [Variants in a recording]
        around.pop("variant:out", None)
        test_mode = _pick_mode(around)
        options = around.get(test_mode, {}) if test_mode else {}
        if test_mode:
            basis = "context"
            reader.evidence.append(f"{api} ran under {test_mode}")
    if test_mode is None and "cuda" in missing:
        test_mode, basis = "device:cuda", "device"
        reader.evidence.append("the script moved data to cuda, which this machine lacks")
    elif test_mode is None and missing:  # Note [Device-only reports] (modes.py): the device stays as an option
        test_mode, basis, options = "device:cuda", "device", {"device": missing[0]}
        reader.evidence.append(f"the script moved data to {missing[0]}, which this machine lacks")
    outputs = [t for c in instances for t in c.outputs()]
    inputs = [t for c in instances for t in c.inputs()]
    nonfinite_out = any(t.stats is not None and (t.stats.nan or t.stats.posinf or t.stats.neginf) for t in outputs)
    kind = _kind_of(test_mode) if test_mode else None
    reference = "eager"
    if kind is None and nonfinite_out:
        kind, test_mode, basis = PatternKind.NaN_Inf, "eager", "nan"
        reader.evidence.append(f"{api} returned NaN or Inf")
    modes_seen = sorted(set(seen_all) | ({test_mode} if test_mode and test_mode != "eager" else set()))
    trigger = _trigger(instances, inputs, test_mode)
    oracle = _oracle(comparing, kind)
    diverged = _diverged(recording, comparing, sides, first)
    return RecordedFacts(**base, api=api, kind=kind, reference_mode=reference if kind else None,
                         test_mode=test_mode if kind else None,
                         test_options={k: v for k, v in options.items() if isinstance(v, bool | int | float | str)},
                         modes_seen=modes_seen, trigger=trigger, oracle=oracle, diverged=diverged,
                         first_divergence=first, mode_basis=basis if kind else None, evidence=reader.evidence)


def _plain_form(call: Call, api: str) -> bool:
    """A call of `api` in its functional form: eager, not in-place, no out= tensor."""
    short = _raw_leaf(call)
    return call.kind not in _PSEUDO and public_name(call.name) == api and not (
        short.endswith("_") and not short.endswith("__")) and "out" not in call.kwargs


def _gradients(side: _Side) -> bool:
    """Whether a side's value is a gradient (autograd computed it)."""
    return any(c.name in ("torch.Tensor.backward", "torch.autograd.grad", "torch.autograd.backward") or
               (c.kind == "getter" and leaf(c.name) == "grad") for c in side.calls)


def _trigger(instances: list[Call], inputs: list[TensorMeta], test_mode: str | None) -> Trigger:
    # the dtypes of the values computed on: floating inputs, or integer ones where nothing floats (an index
    # tensor beside floating data is not a dtype condition)
    floating = [t for t in inputs if t.dtype.startswith(("float", "bfloat", "complex"))]
    dtypes = [d for d in dict.fromkeys(t.dtype for t in (floating or inputs)) if d and d != "float32"]
    if test_mode and test_mode.startswith(("dtype:", "autocast:")):
        dtypes = [d for d in dtypes if d != test_mode.split(":", 1)[1]]
    dtypes = [d for d in dtypes if d.replace("_", "").isalnum() and d.islower()]
    layout = test_mode.split(":", 1)[1] if test_mode and test_mode.startswith("layout:") else None
    if layout is None and any(t.channels_last and t.contiguous is False for t in inputs):
        layout = "channels_last"  # asked for with memory_format; a transposed operand (x @ x.T) is not a condition
    shape: list[str] = []
    params: dict[str, str] = {}
    for call in instances:
        for condition in _shape_conditions(call):
            if condition not in shape:
                shape.append(condition)
        for key, value in _params(call).items():
            params.setdefault(key, value)
    return Trigger(dtypes=dtypes, special_values=_special_values(inputs), layout=layout,  # type: ignore[arg-type]
                   shape=shape, params=params)  # type: ignore[arg-type]


def _oracle(comparing: Call | None, kind: PatternKind | None) -> Oracle:
    if kind == PatternKind.NaN_Inf:
        return Oracle(kind=OracleKind.NaNConsistency)
    if comparing is not None:
        values = {}
        for key in ("atol", "rtol"):
            arg = comparing.kwargs.get(key)
            number = _number(arg.value) if arg is not None else None
            if number is not None and number > 0 and math.isfinite(number):
                values[key] = number
        if values:
            return Oracle(kind=OracleKind.ValueCorrectness, **values)
    return Oracle(kind=OracleKind.ValueCorrectness)


def _diverged(recording: Recording, comparing: Call | None, sides: list[_Side], first: str | None) -> bool | None:
    if comparing is not None:
        if comparing.error is not None and "AssertionError" in comparing.error:
            return True
        if comparing.out is not None and comparing.out.type == "bool":
            return comparing.out.value is False
    if first is not None:
        return True
    if len(sides) == 2 and sides[0].values and sides[1].values:
        return _values_differ(sides[0].values[0], sides[1].values[0])
    return None


# --- applying the facts to a pattern read from the text ---------------------------------------------------------

# Note [Recorded over written]
# A recording says what ran; the text says what the reporter meant. Where they agree nothing changes. The API
# read from the text stays when the recording shows it ran (the title may name one op of several that ran);
# otherwise the recorded API replaces it -- unless the run stopped before its end (killed, timed out, crashed,
# raised) without showing two sides part at an op: then the ops it did not reach are missing from the recording,
# and their absence is no evidence against the text's API. The recorded kind and modes replace the text's when the compared sides
# differ by that mode ("sides"), or when the text found none; a mode seen only around the op ("context", a NaN,
# a missing device) does not overrule a text that found one. The trigger takes the recorded dtypes, special
# values, layout and shapes where the recording has them, and the parameters of both (recorded first) when the
# recorded kind replaced the text's; when both say the same kind, the text's trigger stays and only its empty
# parts are filled from the recording. The oracle takes the recorded tolerances when the script stated them, unless
# the text chose a NaN or crash oracle.


# Runs that stopped before the script's end: what they recorded is a prefix of what the script runs.
PARTIAL_RUNS = frozenset({"killed", "timeout", "crashed", "raised"})


def enrich(pattern: BugPattern | None, error: str | None, facts: RecordedFacts, *, repro: str = "",
           confidence: float = 0.5) -> tuple[BugPattern | None, str | None]:
    """The text-derived pattern (or its absence) with the recorded facts applied (Note [Recorded over written])."""
    if facts.api is None:
        return pattern, error
    ran = {op_key(name) for name in facts.ran} | set(facts.ran)
    partial = facts.run_status in PARTIAL_RUNS and facts.first_divergence is None
    api = pattern.api if pattern is not None and (partial or pattern.api in ran or op_key(pattern.api) in ran) \
        else facts.api
    use_recorded_modes = facts.kind is not None and (pattern is None or facts.mode_basis == "sides")
    if use_recorded_modes:
        kind, reference, test = facts.kind, Mode(name=facts.reference_mode or "eager"), \
            Mode(name=facts.test_mode or "eager", options=facts.test_options)
        if pattern is not None and pattern.kind == PatternKind.NaN_Inf and pattern.test_mode.name != "eager" \
                and kind in NONFINITE_SYMPTOM_KINDS | NAN_SYMPTOM_KINDS:
            # the text found the pair too and named its non-finite symptom (Note [A non-finite result names
            # the kind]: the text read a NaN off a low-precision pair only where the report names or prints
            # one, which a CPU run of a CUDA repro may not reproduce); a NaN_Inf with no pair (NaN inputs, no
            # mode) takes the recorded kind
            kind = PatternKind.NaN_Inf
        elif pattern is not None and pattern.kind == PatternKind.Exception_Mismatch and kind in EXCEPTION_SYMPTOM_KINDS:
            kind = PatternKind.Exception_Mismatch  # the text's symptom on the recorded pair (Note [One side raises])
    elif pattern is not None:
        kind, reference, test = pattern.kind, pattern.reference_mode, pattern.test_mode
    else:
        return None, error or "the recording shows no differential mode pair"
    text_trigger = pattern.trigger if pattern is not None else None
    if pattern is not None and kind == pattern.kind:
        trigger = _filled_trigger(pattern.trigger, facts.trigger)  # the same bug: the text's, its gaps filled
    else:
        trigger = _merged_trigger(text_trigger, facts.trigger, test.name)
    value_oracle = pattern is None or pattern.oracle.kind == OracleKind.ValueCorrectness
    oracle = facts.oracle if facts.oracle is not None and value_oracle and (
        facts.oracle.atol is not None or facts.oracle.rtol is not None or kind == PatternKind.NaN_Inf) \
        else (pattern.oracle if pattern is not None else Oracle())
    if kind != PatternKind.NaN_Inf and oracle.kind == OracleKind.NaNConsistency and pattern is None:
        oracle = Oracle()
    try:
        enriched = BugPattern(kind=kind, api=api, reference_mode=reference, test_mode=test, trigger=trigger,
                              oracle=oracle, repro=pattern.repro if pattern is not None else repro,
                              source_issue=pattern.source_issue if pattern is not None else None,
                              confidence=pattern.confidence if pattern is not None else round(confidence, 3))
    except ValueError as exc:  # pydantic's ValidationError is a ValueError: keep what the text gave
        return pattern, error or f"recorded pattern does not validate: {str(exc).splitlines()[0]}"
    return enriched, None


def _filled_trigger(text: Trigger, recorded: Trigger | None) -> Trigger:
    """The text's trigger, with what it left empty taken from the recording."""
    if recorded is None:
        return text
    return Trigger(dtypes=text.dtypes or recorded.dtypes, special_values=text.special_values or recorded.special_values,
                   layout=text.layout or recorded.layout, shape=text.shape or recorded.shape,
                   params=text.params or recorded.params)


def _merged_trigger(text: Trigger | None, recorded: Trigger | None, test_mode: str) -> Trigger:
    if recorded is None:
        return text or Trigger()
    if text is None:
        return recorded
    dtypes = recorded.dtypes or text.dtypes
    if test_mode.startswith(("dtype:", "autocast:")):
        dtypes = [d for d in dtypes if d != test_mode.split(":", 1)[1]]
    layout = test_mode.split(":", 1)[1] if test_mode.startswith("layout:") else (recorded.layout or text.layout)
    return Trigger(dtypes=dtypes, special_values=recorded.special_values or text.special_values,
                   layout=layout, shape=recorded.shape or text.shape,  # type: ignore[arg-type]
                   params={**text.params, **recorded.params})
