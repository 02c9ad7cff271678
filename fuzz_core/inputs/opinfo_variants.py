"""Find the OpInfo entry behind any spelling of an op: method, in-place method, alias, or alias method.

OpInfo lists `softmax` once, but the inventory names `torch.Tensor.softmax`, `torch.Tensor.scatter_`
and `torch.arccos` (an alias of `acos`) separately. Each entry carries its variants as objects
(`op`, `method_variant`, `inplace_variant`, and per alias the same three), so a target resolved by the
checked name walk is matched by identity: nothing is looked up from a string.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import torch

from fuzz_core.inputs import NoInputs, Sample
from fuzz_core.inputs.opinfo import op_db
from fuzz_core.modes.base import bound_callable
from fuzz_core.target import Target


def _variants(op: Any) -> list[Any]:
    found = [op.op, getattr(op, "method_variant", None), getattr(op, "inplace_variant", None)]
    for alias in getattr(op, "aliases", ()) or ():
        found += [getattr(alias, "op", None), getattr(alias, "method_variant", None),
                  getattr(alias, "inplace_variant", None)]
    return [v for v in found if v is not None]


@lru_cache(maxsize=1)
def _index() -> dict[int, tuple[Any, Any]]:
    """id(variant object) -> (variant object, OpInfo entry); the default entry of a name wins."""
    index: dict[int, tuple[Any, Any]] = {}
    for op in sorted(op_db(), key=lambda o: bool(o.variant_test_name)):
        for variant in _variants(op):
            index.setdefault(id(variant), (variant, op))
    return index


def opinfo_for_callable(fn: Any) -> Any | None:
    """The OpInfo entry that lists `fn` as its function, method, in-place or alias variant."""
    hit = _index().get(id(fn))
    return hit[1] if hit is not None and hit[0] is fn else None


def _runs(target: Target, sample: Sample) -> bool:
    args, kwargs = _private(sample)
    try:
        bound_callable(target, sample)(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a sample the variant rejects is simply not used
        return False
    return True


def _private(sample: Sample) -> tuple[tuple[Any, ...], dict[str, Any]]:
    from fuzz_core.tensors import clone_tree

    return clone_tree(sample.tree())


def variant_samples(target: Target, dtype: torch.dtype, max_samples: int) -> list[Sample]:
    """OpInfo samples of the entry `target.fn` is a variant of, kept only where the variant accepts them.

    In-place variants reject samples whose result would broadcast beyond the input or change its
    dtype, so every sample is tried once on a private copy before it is kept.
    """
    op = opinfo_for_callable(target.fn)
    if op is None:
        raise NoInputs(f"no OpInfo entry lists {target.api} as a variant")
    if dtype not in op.supported_dtypes("cpu"):
        raise NoInputs(f"OpInfo says {op.name} does not support {dtype} on CPU")
    samples: list[Sample] = []
    torch.manual_seed(0)
    for index, s in enumerate(op.sample_inputs("cpu", dtype, requires_grad=False)):
        sample = Sample(args=(s.input, *s.args), kwargs=dict(s.kwargs), origin=f"opinfo-variant:{op.name}#{index}")
        if _runs(target, sample):
            samples.append(sample)
        if len(samples) >= max_samples or index >= 4 * max_samples:
            break
    if not samples:
        raise NoInputs(f"{target.api} accepts none of OpInfo {op.name}'s samples")
    return samples
