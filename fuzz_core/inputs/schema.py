"""Seed inputs from an op's ATen schemas: every required argument gets a value of its declared type.

A Tensor method or a C-bound function has no Python signature, and its docstring often shows only
the optional arguments. Its ATen schemas (`aten::scatter_.src(Tensor self, int dim, Tensor index,
Tensor src)`) say what each argument is. Values follow the type, then the name: `index` tensors hold
in-range positions, `mask` tensors are bool, `dim` is 0, lists named `size` are the input's shape.
A candidate is kept only when eager accepts it (Note [Inputs that run]).

Note [Inputs that run]
A builder proposes; eager disposes. Every candidate call runs once on a private copy before it is
kept, so a wrong guess costs one failed call and never reaches the fuzz loop.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Iterator

import torch

from fuzz_core.inputs import Sample
from fuzz_core.target import Target

# torch namespace of the API -> prefix of its ATen name (torch.special.erfcx -> aten::special_erfcx).
_ATEN_PREFIXES = {"torch.special": "special_", "torch.linalg": "linalg_", "torch.fft": "fft_",
                  "torch.nn.functional": "", "torch.Tensor": "", "torch": "", "torch.sparse": "sparse_"}
SHAPES: tuple[tuple[int, ...], ...] = ((3, 4), (4, 4), (2, 4, 4), (4,), (2, 3, 4, 4), (2, 3, 4, 4, 4), (1,))
LAYOUTS = ("strided", "sparse_coo", "sparse_csr", "sparse_csc")

_INT_BY_NAME = {"dim": 0, "dim0": 0, "dim1": 1, "dim2": 1, "start": 0, "end": 2, "length": 2, "n": 2, "k": 1,
                "diagonal": 0, "offset": 0, "split_size": 2, "sections": 2, "chunks": 2, "repeats": 2, "groups": 1,
                "upscale_factor": 2, "downscale_factor": 2, "num_classes": -1, "bins": 4, "steps": 4,
                "window_length": 4, "n_fft": 4, "num_samples": 2, "storage_offset": 0, "index": 0, "step": 1,
                "high": 4, "low": 0, "row": 4, "col": 4, "ndim": 2, "decimals": 0, "exponent": 2, "source": 0,
                "destination": 1, "axis": 0, "axis0": 0, "axis1": 1, "size": 2, "num_groups": 1, "p": 2}
_FLOAT_BY_NAME = {"p": 0.5, "q": 0.5, "eps": 1e-5, "momentum": 0.1, "lambd": 0.5, "min": -0.5, "max": 0.5,
                  "alpha": 1.0, "beta": 1.0, "value": 1.0, "exponent": 2.0, "threshold": 0.5, "margin": 1.0,
                  "negative_slope": 0.01, "scale": 1.0, "tol": 1e-5, "rtol": 1e-5, "atol": 1e-8}
_LIST_BY_NAME = {"kernel_size": [2], "stride": [1], "padding": [0], "dilation": [1], "output_size": [2],
                 "pad": [1, 1], "dims": [0], "dim": [0], "shifts": [1], "repeats": [1, 1], "output_padding": [0],
                 "scale_factors": [2.0], "normalized_shape": None, "split_sizes": None, "sizes": None, "size": None,
                 "shape": None, "stride_": None}
_STR_BY_NAME = {"reduce": "sum", "rounding_mode": "floor", "approximate": "none", "padding_mode": "zeros",
                "mode": "bilinear", "norm": "backward", "ord": "fro", "side": "left", "interpolation": "linear",
                "equation": "i->i", "indexing": "ij", "UPLO": "L", "driver": None, "reduction": "mean"}
_INDEX_NAMES = re.compile(r"^(index|indices|idx|indices\d|offsets|sorter|target_lengths|input_lengths)$")
_MASK_NAMES = re.compile(r"^(mask|condition)$")
_VECTOR_NAMES = re.compile(r"^(vec|vec\d|boundaries|sorted_sequence)$")


@dataclass(frozen=True)
class Argument:
    """One required argument of an overload: its name, its schema type text, and whether it is keyword-only."""

    name: str
    type: str
    kwarg_only: bool


def aten_name(api: str, short_name: str) -> str:
    namespace = api.rsplit(".", 1)[0] if "." in api else "torch"
    return _ATEN_PREFIXES.get(namespace, "") + short_name


@lru_cache(maxsize=4096)
def overloads(name: str) -> tuple[tuple[Argument, ...], ...]:
    """Required arguments of each ATen overload called `name` (out= overloads excluded), fewest first."""
    try:
        schemas = torch._C._jit_get_schemas_for_operator(f"aten::{name}")
    except Exception:  # noqa: BLE001 - no ATen op of that name: nothing to build from
        return ()
    found = []
    for schema in schemas:
        if schema.overload_name.endswith("out") or any(a.name == "out" for a in schema.arguments):
            continue
        required = tuple(Argument(a.name, str(a.type), bool(a.kwarg_only)) for a in schema.arguments
                         if not a.has_default_value())
        if any(_unbuildable(a) for a in required):
            continue
        found.append(required)
    return tuple(sorted(set(found), key=len))


_UNBUILDABLE_TYPES = ("Dimname", "Storage", "Stream", "Device", "Layout", "Future", "AnyEnumType", "Any", "Capsule")


def _unbuildable(arg: Argument) -> bool:
    return arg.type.startswith("__torch__") or any(word in arg.type for word in _UNBUILDABLE_TYPES)


@dataclass(frozen=True)
class Plan:
    """How one candidate call is built: the input shape, the dtype, the first tensor's layout."""

    shape: tuple[int, ...]
    dtype: torch.dtype
    layout: str = "strided"
    secondary: str = "same"  # "same": other tensors take the input's shape; "one": shape (1,)


def _to_layout(t: torch.Tensor, layout: str) -> torch.Tensor:
    if layout == "sparse_coo":
        return t.to_sparse()
    if layout == "sparse_csr":
        return t.to_sparse_csr()
    if layout == "sparse_csc":
        return t.to_sparse_csc()
    return t


def _values(shape: tuple[int, ...], dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen).to(dtype)
    if dtype.is_complex:
        return torch.randn(shape, generator=gen, dtype=torch.complex64).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    return torch.randint(1, 6, shape, generator=gen).to(dtype)


class _Builder:
    """Values for one candidate call, drawn from one generator so a plan always builds the same call."""

    def __init__(self, plan: Plan, seed: int) -> None:
        self.plan = plan
        self.gen = torch.Generator().manual_seed(seed)
        self.first_tensor = True

    def tensor(self, name: str) -> torch.Tensor:
        plan = self.plan
        first, self.first_tensor = self.first_tensor, False
        if name == "offsets":
            return torch.tensor([0, 1])  # bag starts: increasing, from 0
        if _INDEX_NAMES.match(name):
            return torch.randint(0, 2, plan.shape, generator=self.gen)
        if _MASK_NAMES.match(name):
            return torch.randint(0, 2, plan.shape, generator=self.gen).bool()
        if _VECTOR_NAMES.match(name):
            vector = _values((plan.shape[-1],), plan.dtype, self.gen)
            return vector.sort().values if name in ("boundaries", "sorted_sequence") else vector
        if first:
            return _to_layout(_values(plan.shape, plan.dtype, self.gen), plan.layout)
        shape = (1,) if plan.secondary == "one" else plan.shape
        made = _values(shape, plan.dtype, self.gen)
        if plan.layout != "strided" and name.startswith("mat1"):
            return _to_layout(made, plan.layout)
        return made

    def value(self, arg: Argument) -> Any:
        kind = arg.type.replace("Optional[", "").rstrip("]?")
        name = arg.name
        if arg.type.startswith("Optional["):
            return None
        if kind == "Tensor":
            return self.tensor(name)
        if kind.startswith("List[Optional[Tensor]") or kind.startswith("List[Tensor"):
            if _INDEX_NAMES.match(name):
                return [torch.randint(0, 2, (2,), generator=self.gen)]
            return [self.tensor(name), self.tensor(name)]
        if kind in ("int", "SymInt"):
            return _INT_BY_NAME.get(name, 1)
        if kind in ("float", "number", "Scalar"):
            return _FLOAT_BY_NAME.get(name, 1.0 if kind != "float" else 0.5)
        if kind == "bool":
            return False
        if kind == "str":
            return _STR_BY_NAME.get(name, "sum")
        if kind.startswith("List[int]") or kind.startswith("List[SymInt]") or kind == "int[]":
            listed = _LIST_BY_NAME.get(name, [1])
            return list(self.plan.shape) if listed is None else listed
        if kind.startswith("List[float]"):
            return [2.0]
        if kind in ("ScalarType", "int") or "ScalarType" in kind:
            return self.plan.dtype
        if kind == "MemoryFormat":
            return torch.contiguous_format
        if kind == "Generator":
            return None
        raise _Skip(arg.type)


class _Skip(Exception):
    """An argument type this builder does not make."""


def build_call(arguments: tuple[Argument, ...], plan: Plan, seed: int) -> Sample | None:
    """One candidate call for an overload, or None when it has an argument type we cannot make."""
    builder = _Builder(plan, seed)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    try:
        for arg in arguments:
            value = builder.value(arg)
            if arg.kwarg_only:
                kwargs[arg.name] = value
            else:
                args.append(value)
    except _Skip:
        return None
    return Sample(args=tuple(args), kwargs=kwargs, origin=f"schema:{plan.shape}:{plan.layout}")


def plans(dtype: torch.dtype) -> Iterator[Plan]:
    """Candidate plans, most ordinary first: dense inputs in the harness dtype before other dtypes and layouts."""
    other_dtypes = [d for d in (torch.int64, torch.bool, torch.complex64) if d != dtype]
    for secondary, shape in itertools.product(("same", "one"), SHAPES):
        yield Plan(shape, dtype, "strided", secondary)
    for candidate, shape in itertools.product(other_dtypes, SHAPES[:3]):
        yield Plan(shape, candidate)
    for layout, shape in itertools.product(LAYOUTS[1:], ((4, 4), (3, 4))):
        yield Plan(shape, dtype, layout)


def schema_samples(target: Target, dtype: torch.dtype, seed: int, max_samples: int,
                   runs: Callable[[Target, Sample], bool]) -> list[Sample]:
    """Inputs built from the ATen schemas of the target's op, kept when eager accepts them."""
    variants = overloads(aten_name(target.api, target.short_name))
    if not variants and target.api.startswith("torch.Tensor."):
        variants = ((Argument("self", "Tensor", False),),)  # a method without a schema of its own name
    if not variants:
        return []
    samples: list[Sample] = []
    for plan in plans(dtype):
        for arguments in variants:
            sample = build_call(arguments, plan, seed)
            if sample is not None and runs(target, sample):
                samples.append(sample)
                break
        if len(samples) >= max_samples:
            break
    return samples
