"""Typed input descriptions: each argument of a call as bounded data that a worker can materialise.

Note [Described inputs]
For an API that OpInfo and the signature generator cannot feed, someone (in the pipeline: an LLM)
says what its inputs look like: per positional and keyword argument a kind, and for tensors a
shape, dtype, value range, special values, layout and requires_grad; for nn.Module classes the
constructor's keyword arguments. Every name comes from a fixed vocabulary below and every number
is bounded, so a description is data only: nothing in it is imported, evaluated or executed.
fuzz_core validates a description itself (a spec loaded from a database is as untrusted as the
answer that produced it); the agent's pydantic model (agent/llm/schemas.py HarnessInputs) mirrors
this module and delegates its checks here. No torch import: `import fuzz_core` stays cheap.
"""

from __future__ import annotations

import keyword
import math
import re
from dataclasses import dataclass, field
from typing import Any

from fuzz_core.spec import SPECIAL_VALUES

TENSOR_DTYPES = ("float32", "float64", "float16", "bfloat16", "complex64", "complex128",
                 "int8", "int16", "int32", "int64", "uint8", "bool")
FLOATING_DTYPES = ("float32", "float64", "float16", "bfloat16")
COMPLEX_DTYPES = ("complex64", "complex128")
INTEGER_DTYPES = ("int8", "int16", "int32", "int64", "uint8")
ARGUMENT_KINDS = ("tensor", "int", "float", "bool", "str", "none", "int_list")
LAYOUTS = ("contiguous", "noncontiguous", "transposed", "channels_last")
# String arguments torch APIs take (reductions, padding/interpolation modes, norms, FFT norms,
# rounding, approximations, triangles, indexing); anything else is refused.
STRING_LITERALS = frozenset({
    "mean", "sum", "none", "batchmean", "prod", "amax", "amin",
    "zeros", "constant", "reflect", "replicate", "circular", "border", "reflection",
    "nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area",
    "valid", "same", "fro", "nuc", "reduced", "complete", "r",
    "backward", "forward", "ortho", "floor", "trunc", "tanh", "L", "U",
    "left", "right", "lower", "higher", "midpoint", "ij", "xy",
    "gelsy", "gelsd", "gelss", "gels", "add", "multiply",
})
# Einsum equations are the one free-form string torch needs; they are letters, commas, '->' and '...'.
EINSUM_EQUATION = re.compile(r"^[a-zA-Z]{0,12}(,[a-zA-Z.]{0,12}){0,4}(->[a-zA-Z.]{0,12})?$")

MAX_ARGS = 8
MAX_KWARGS = 16
MAX_RANK = 6
MAX_DIM = 4096
MAX_NUMEL = 1 << 16  # 65,536 elements per tensor
MAX_TOTAL_NUMEL = 1 << 18  # over every tensor of one call
MAX_INT_LIST = 8
MAX_ABS_INT = 2**31 - 1
MAX_ABS_FLOAT = 1e30
MAX_NAME = 64


class DescriptionError(ValueError):
    """An input description that fuzz_core will not materialise; the message names the field."""


@dataclass(frozen=True)
class TensorDescription:
    shape: tuple[int, ...]
    dtype: str | None = None  # None: the harness's dtype (so --precision variants apply)
    low: float | None = None  # value range [low, high]; None: standard normal (floats), -5..5 (ints)
    high: float | None = None
    special_values: tuple[str, ...] = ()
    layout: str = "contiguous"
    requires_grad: bool = False

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class ArgumentDescription:
    kind: str
    tensor: TensorDescription | None = None
    value: int | float | bool | str | tuple[int, ...] | None = None


@dataclass(frozen=True)
class InputDescription:
    args: tuple[ArgumentDescription, ...] = ()
    kwargs: dict[str, ArgumentDescription] = field(default_factory=dict)
    constructor_kwargs: dict[str, ArgumentDescription] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Any) -> InputDescription:
        """Validate stored/answered JSON; raises DescriptionError with the offending field's path."""
        _expect(isinstance(data, dict), "", "must be an object")
        _only(data, {"args", "kwargs", "constructor_kwargs"}, "")
        raw_args = data.get("args") or []
        _expect(isinstance(raw_args, list) and len(raw_args) <= MAX_ARGS, "args", f"must be a list of at most {MAX_ARGS}")
        args = tuple(_argument(a, f"args[{i}]") for i, a in enumerate(raw_args))
        kwargs = _named(data.get("kwargs"), "kwargs", MAX_KWARGS, literal_only=False)
        ctor = _named(data.get("constructor_kwargs"), "constructor_kwargs", MAX_KWARGS, literal_only=True)
        total = sum(a.tensor.numel for a in (*args, *kwargs.values()) if a.tensor is not None)
        _expect(total <= MAX_TOTAL_NUMEL, "", f"tensors hold {total} elements in all; at most {MAX_TOTAL_NUMEL}")
        return cls(args, kwargs, ctor)

    def to_dict(self) -> dict[str, Any]:
        return {"args": [_argument_dict(a) for a in self.args],
                "kwargs": {k: _argument_dict(a) for k, a in self.kwargs.items()},
                "constructor_kwargs": {k: _argument_dict(a) for k, a in self.constructor_kwargs.items()}}


def _expect(condition: bool, where: str, message: str) -> None:
    if not condition:
        raise DescriptionError(f"{where}: {message}" if where else message)


def _only(data: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(map(str, set(data) - allowed))
    _expect(not unknown, where, f"unknown field(s) {unknown[:5]}; allowed: {sorted(allowed)}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return _is_int(value) or isinstance(value, float)


def _named(raw: Any, where: str, limit: int, *, literal_only: bool) -> dict[str, ArgumentDescription]:
    raw = raw or {}
    _expect(isinstance(raw, dict) and len(raw) <= limit, where, f"must be an object of at most {limit} entries")
    out = {}
    for name, value in raw.items():
        _expect(isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)
                and not name.startswith("_") and len(name) <= MAX_NAME,
                where, f"{name!r} is not a plain parameter name")
        argument = _argument(value, f"{where}.{name}")
        _expect(not (literal_only and argument.kind == "tensor"), f"{where}.{name}", "must be a literal, not a tensor")
        out[name] = argument
    return out


def _argument(raw: Any, where: str) -> ArgumentDescription:
    _expect(isinstance(raw, dict), where, "must be an object with a kind")
    _only(raw, {"kind", "tensor", "value"}, where)
    kind = raw.get("kind")
    _expect(kind in ARGUMENT_KINDS, f"{where}.kind", f"{str(kind)[:40]!r} is not one of {ARGUMENT_KINDS}")
    if kind == "tensor":
        _expect(raw.get("value") is None, where, "a tensor has no value")
        return ArgumentDescription("tensor", tensor=_tensor(raw.get("tensor"), f"{where}.tensor"))
    _expect(raw.get("tensor") is None, where, f"a {kind} argument has no tensor")
    return ArgumentDescription(kind, value=_literal(kind, raw.get("value"), f"{where}.value"))


def _literal(kind: str, value: Any, where: str) -> Any:
    if kind == "none":
        _expect(value is None, where, "must be null")
        return None
    if kind == "bool":
        _expect(isinstance(value, bool), where, "must be true or false")
        return value
    if kind == "int":
        _expect(_is_int(value) and abs(value) <= MAX_ABS_INT, where, f"must be an integer within ±{MAX_ABS_INT}")
        return value
    if kind == "float":
        _expect(_is_number(value) and math.isfinite(value) and abs(value) <= MAX_ABS_FLOAT, where,
                f"must be a finite number within ±{MAX_ABS_FLOAT:g}")
        return float(value)
    if kind == "int_list":
        _expect(isinstance(value, list) and len(value) <= MAX_INT_LIST
                and all(_is_int(v) and abs(v) <= MAX_DIM for v in value),
                where, f"must be a list of at most {MAX_INT_LIST} integers within ±{MAX_DIM}")
        return tuple(value)
    _expect(isinstance(value, str) and (value in STRING_LITERALS or bool(EINSUM_EQUATION.match(value))), where,
            f"{str(value)[:40]!r} is not an allowed string (a known mode/reduction name or an einsum equation)")
    return value


def _tensor(raw: Any, where: str) -> TensorDescription:
    _expect(isinstance(raw, dict), where, "a tensor argument needs a tensor object")
    _only(raw, {"shape", "dtype", "low", "high", "special_values", "layout", "requires_grad"}, where)
    shape = raw.get("shape")
    _expect(isinstance(shape, list) and len(shape) <= MAX_RANK, f"{where}.shape", f"must be a list of at most {MAX_RANK} sizes")
    _expect(all(_is_int(d) and 0 <= d <= MAX_DIM for d in shape), f"{where}.shape", f"sizes must be integers in 0..{MAX_DIM}")
    numel = math.prod(shape)
    _expect(numel <= MAX_NUMEL, f"{where}.shape", f"{shape} holds {numel} elements; at most {MAX_NUMEL}")
    dtype = raw.get("dtype")
    _expect(dtype is None or dtype in TENSOR_DTYPES, f"{where}.dtype", f"{str(dtype)[:40]!r} is not one of {TENSOR_DTYPES}")
    low, high = raw.get("low"), raw.get("high")
    for name, bound in (("low", low), ("high", high)):
        _expect(bound is None or (_is_number(bound) and math.isfinite(bound) and abs(bound) <= MAX_ABS_FLOAT),
                f"{where}.{name}", f"must be a finite number within ±{MAX_ABS_FLOAT:g}")
    _expect(low is None or high is None or low <= high, where, f"low {low} is above high {high}")
    specials = raw.get("special_values") or []
    _expect(isinstance(specials, list) and all(v in SPECIAL_VALUES for v in specials), f"{where}.special_values",
            f"must be some of {SPECIAL_VALUES}")
    _expect(not specials or dtype is None or dtype in FLOATING_DTYPES, f"{where}.special_values",
            f"need a floating dtype, not {dtype}")
    _expect(len(specials) <= numel, f"{where}.special_values", f"{len(specials)} values do not fit {numel} elements")
    layout = raw.get("layout") or "contiguous"
    _expect(layout in LAYOUTS, f"{where}.layout", f"{str(layout)[:40]!r} is not one of {LAYOUTS}")
    _expect(layout != "channels_last" or len(shape) in (4, 5), f"{where}.layout", "channels_last needs a 4-D or 5-D shape")
    _expect(layout != "transposed" or len(shape) >= 2, f"{where}.layout", "transposed needs at least 2 dimensions")
    requires_grad = raw.get("requires_grad", False)
    _expect(isinstance(requires_grad, bool), f"{where}.requires_grad", "must be true or false")
    _expect(not requires_grad or dtype is None or dtype in FLOATING_DTYPES + COMPLEX_DTYPES, f"{where}.requires_grad",
            f"only floating or complex tensors take gradients, not {dtype}")
    return TensorDescription(tuple(shape), dtype, None if low is None else float(low),
                             None if high is None else float(high), tuple(specials), layout, requires_grad)


def _argument_dict(argument: ArgumentDescription) -> dict[str, Any]:
    if argument.tensor is not None:
        t = argument.tensor
        return {"kind": "tensor", "tensor": {"shape": list(t.shape), "dtype": t.dtype, "low": t.low, "high": t.high,
                                             "special_values": list(t.special_values), "layout": t.layout,
                                             "requires_grad": t.requires_grad}}
    value = list(argument.value) if isinstance(argument.value, tuple) else argument.value
    return {"kind": argument.kind, "value": value}
