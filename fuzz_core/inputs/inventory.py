"""Seed inputs for any inventory API that is not an OpInfo name: the builders in order, first that runs wins.

Order: the per-op argument rules (fuzz_core.inputs.arg_rules), written for APIs whose arguments have
meaning a type cannot say; the OpInfo entry the target is a variant or alias of (the best inputs
there are); the Python signature or docstring (fuzz_core.inputs.signature); the ATen schemas, which also try other
dtypes and sparse layouts; and for nn.Module classes, constructors and forwards with several inputs.
Every kept input was accepted by eager once (Note [Inputs that run] in schema.py).
"""

from __future__ import annotations

import torch

import inspect

from fuzz_core.inputs import NoInputs, Sample
from fuzz_core.inputs.arg_rules import RULES, rule_samples
from fuzz_core.inputs.modules import module_samples
from fuzz_core.inputs.opinfo import opinfo_samples
from fuzz_core.inputs.opinfo_variants import variant_samples
from fuzz_core.inputs.schema import schema_samples
from fuzz_core.inputs.signature import signature_samples
from fuzz_core.modes.base import bound_callable
from fuzz_core.target import Target
from fuzz_core.tensors import clone_tree


def accepts(target: Target, sample: Sample) -> bool:
    """Eager runs the target on a private copy of `sample` without raising."""
    args, kwargs = clone_tree(sample.tree())
    try:
        with torch.no_grad():
            bound_callable(target, sample)(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a rejected candidate is the expected case, not an error
        return False
    return True


# Dtypes tried, in order, for an OpInfo op that does not support the harness dtype (bitwise ops, gcd, imag).
OTHER_DTYPES = (torch.int64, torch.complex64, torch.bool, torch.float64, torch.int32, torch.uint8)
# Optional keyword arguments some functions need in practice although they default to None (F.upsample).
_EXTRA_KWARGS = ({"scale_factor": 2.0}, {"min": -0.5}, {"size": 2})


def opinfo_any_dtype(api: str, dtype: torch.dtype, max_samples: int) -> list[Sample]:
    """OpInfo samples in `dtype`, or else in the first other dtype the op supports (NoInputs when none)."""
    try:
        return opinfo_samples(api, dtype, max_samples)
    except NoInputs as first:
        for other in OTHER_DTYPES:
            try:
                return opinfo_samples(api, other, max_samples)
            except NoInputs:
                continue
        raise first


def _with_extras(target: Target, dtype: torch.dtype, seed: int, max_samples: int) -> list[Sample]:
    from fuzz_core.inputs.signature import tensor_only_calls

    try:
        names = set(inspect.signature(target.fn).parameters)
    except (TypeError, ValueError):
        return []
    for extra in _EXTRA_KWARGS:
        if not set(extra) <= names:
            continue
        found = [Sample(s.args, {**s.kwargs, **extra}, s.ctor, f"{s.origin}+{sorted(extra)}")
                 for s in tensor_only_calls(target, dtype, seed)]
        kept = [s for s in found if accepts(target, s)][:max_samples]
        if kept:
            return kept
    return []


def inventory_samples(target: Target, dtype: torch.dtype, seed: int, max_samples: int) -> list[Sample]:
    """Inputs the target accepts, from the first builder that has any; NoInputs lists why each failed."""
    reasons: list[str] = []
    if target.api in RULES and not target.code:
        samples = rule_samples(target, dtype, seed, max_samples, accepts)
        if samples:
            return samples
        reasons.append(f"eager rejects every argument rule of {target.api}")
    if not target.is_module_class and not target.code:
        try:
            return variant_samples(target, dtype, max_samples)
        except NoInputs as exc:
            reasons.append(str(exc))
    try:
        return signature_samples(target, dtype, seed, max_samples)
    except NoInputs as exc:
        reasons.append(str(exc))
    if not target.is_module_class:
        samples = _with_extras(target, dtype, seed, max_samples)
        if samples:
            return samples
    if target.is_module_class:
        samples = module_samples(target, dtype, seed, max_samples, accepts)
        what = "its constructor and forward"
    else:
        samples = schema_samples(target, dtype, seed, max_samples, accepts)
        what = "its ATen schemas"
    if samples:
        return samples
    reasons.append(f"no input built from {what} runs")
    raise NoInputs(f"could not build an input that {target.api} accepts: " + "; ".join(reasons))
