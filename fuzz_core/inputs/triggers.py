"""Apply a pattern's trigger (special values, layout, shape, dtypes, parameter conditions) to seed inputs."""

from __future__ import annotations

import re
from typing import Any

import torch

from fuzz_core.inputs import Sample
from fuzz_core.inputs.params import place_params
from fuzz_core.modes.layout import channels_last_copy, noncontiguous_copy
from fuzz_core.mutators.values import special_value
from fuzz_core.target import Target
from fuzz_core.tensors import map_tensors, tensor_leaves

_CONDITION = re.compile(r"^\s*(>=|<=|>|<|==|!=)\s*(-?\d+(?:\.\d+)?)\s*$")


_FLOAT_WORDS = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def value_for_condition(condition: Any) -> Any:
    """A value satisfying `condition`: a literal is itself; '> 0' → 1, '>= 2' → 2, '< 0' → -1, '!= 0' → 1;
    the words nan/inf/-inf (how a pattern spells float('nan'), which is no literal) are those floats."""
    if not isinstance(condition, str):
        return condition
    if condition in _FLOAT_WORDS:
        return _FLOAT_WORDS[condition]
    match = _CONDITION.match(condition)
    if not match:
        return condition
    op, number = match.group(1), match.group(2)
    value: float = float(number)
    is_int = "." not in number
    step = 1 if is_int else 0.5
    chosen = {">": value + step, ">=": value, "<": value - step, "<=": value, "==": value,
              "!=": value + step}[op]
    return int(chosen) if is_int else chosen


def _inject(sample: Sample, name: str, positions: int, gen: torch.Generator) -> Sample:
    done = False

    def put(t: torch.Tensor) -> torch.Tensor:
        nonlocal done
        if done or not t.is_floating_point() or t.numel() == 0 or t.layout != torch.strided:
            return t  # a sparse tensor has no flat view to write into (the campaign turns it away)
        out = t.clone()
        flat = out.view(-1) if out.is_contiguous() else out.reshape(-1)
        idx = torch.randperm(flat.numel(), generator=gen)[:positions]
        flat[idx] = special_value(name, t.dtype)
        done = True
        return flat.view(t.shape)

    return sample.with_tree(map_tensors(sample.tree(), put), origin=f"{sample.origin}+{name}")


def _reshape_first(sample: Sample, how: str) -> Sample | None:
    leaves = tensor_leaves(sample.tree())
    if not leaves:
        return None
    first_shape = leaves[0].shape

    def change(t: torch.Tensor) -> torch.Tensor:
        if t.shape != first_shape or t.layout != torch.strided:  # a sparse input keeps the shape its op needs
            return t
        if how in ("empty", "zero_size"):
            if t.dim() == 0:
                return t
            return t.narrow(0, 0, 0).clone() if how == "zero_size" or t.dim() == 1 else t.narrow(-1, 0, 0).clone()
        if how == "scalar":
            return t.reshape(-1)[0].clone() if t.numel() else t
        if how == "large":
            reps = max(1, -(-70000 // max(1, t.numel())))
            return t.repeat(reps, *([1] * (t.dim() - 1))) if t.dim() else t.expand(70000).clone()
        return t

    return sample.with_tree(map_tensors(sample.tree(), change), origin=f"{sample.origin}+{how}")


def apply_trigger(samples: list[Sample], trigger: dict[str, Any], seed: int, target: Target | None = None) -> list[Sample]:
    """The seed inputs rewritten so that they satisfy the trigger's conditions."""
    if not trigger:
        return samples
    gen = torch.Generator().manual_seed(seed)
    out = list(samples)
    params = trigger.get("params") or {}
    if params:
        values = {k: value_for_condition(v) for k, v in params.items()}
        out = [place_params(s, values, target) for s in out]
    for how in trigger.get("shape") or []:
        out = [r for r in (_reshape_first(s, how) for s in out) if r is not None] or out
    dtypes = trigger.get("dtypes") or []
    if dtypes:
        targets = [getattr(torch, d) for d in dtypes if isinstance(getattr(torch, d, None), torch.dtype)]
        out = [s.with_tree(map_tensors(s.tree(), lambda t, d=d: t.to(d) if t.is_floating_point() else t),
                           origin=f"{s.origin}+{d}") for s in out for d in targets if d.is_floating_point] or out
    specials = trigger.get("special_values") or []
    if specials:
        out = [_inject(s, name, 1 + (i % 3), gen) for s in out for i, name in enumerate(specials)]
    layout = trigger.get("layout")
    if layout == "noncontiguous":
        out = [s.with_tree(map_tensors(s.tree(), noncontiguous_copy), origin=f"{s.origin}+noncontig") for s in out]
    elif layout == "channels_last":
        out = [s.with_tree(map_tensors(s.tree(), channels_last_copy), origin=f"{s.origin}+cl") for s in out]
    return out
