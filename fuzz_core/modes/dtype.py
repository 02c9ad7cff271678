"""`dtype:<d>` and `autocast:<d>`: the target in low precision against float32 on the same (rounded) inputs."""

from __future__ import annotations

from typing import Any

import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.base import Mode, NotApplicable, bound_callable
from fuzz_core.target import Target
from fuzz_core.tensors import cast_floating, map_tensors, tensor_leaves

LOW_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def _has_float_input(target: Target, sample: Sample) -> bool:
    return target.is_module_class or any(t.is_floating_point() for t in tensor_leaves(sample.tree()))


class LowPrecisionMode(Mode):
    """Both modes see inputs already representable in the low dtype, so only the computation differs."""

    def check(self, target: Target, sample: Sample) -> None:
        if not _has_float_input(target, sample):
            raise NotApplicable(f"{self.name}: the API takes no floating-point input")

    def canonicalize(self, sample: Sample) -> Sample:
        low = self.compute_dtype
        assert low is not None

        def round_through(t: torch.Tensor) -> torch.Tensor:
            return t.to(low).to(t.dtype) if t.is_floating_point() and t.dtype != low else t

        return sample.with_tree(map_tensors(sample.tree(), round_through))


class DtypeMode(LowPrecisionMode):
    def run(self, target: Target, sample: Sample) -> Any:
        low = self.compute_dtype
        assert low is not None
        fn = bound_callable(target, sample, dtype=low if target.is_module_class else None)
        args, kwargs = cast_floating(sample.tree(), low)
        return fn(*args, **kwargs)

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        return f'''
def run_mode(fn, args, kwargs):
    if isinstance(fn, torch.nn.Module):
        import copy
        fn = copy.deepcopy(fn).to({self.compute_dtype})
    low = lambda t: t.to({self.compute_dtype}) if isinstance(t, torch.Tensor) and t.is_floating_point() else t
    args, kwargs = torch.utils._pytree.tree_map(low, (args, kwargs))
    return fn(*args, **kwargs)
'''


class AutocastMode(LowPrecisionMode):
    def run(self, target: Target, sample: Sample) -> Any:
        fn = bound_callable(target, sample)
        with torch.autocast("cpu", dtype=self.compute_dtype):
            return fn(*sample.args, **sample.kwargs)

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        return f'''
def run_mode(fn, args, kwargs):
    with torch.autocast("cpu", dtype={self.compute_dtype}):
        return fn(*args, **kwargs)
'''


def make_dtype(name: str, options: dict) -> Mode:
    family, _, dtype_name = name.partition(":")
    if dtype_name not in LOW_DTYPES:
        raise KeyError(name)
    cls = DtypeMode if family == "dtype" else AutocastMode
    return cls(name=name, options=options, compute_dtype=LOW_DTYPES[dtype_name], compares_dtype=False)
