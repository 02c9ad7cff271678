"""`layout:noncontiguous` and `layout:channels_last`: the same values in another memory layout."""

from __future__ import annotations

from typing import Any

import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.base import Mode, NotApplicable, bound_callable
from fuzz_core.target import Target
from fuzz_core.tensors import map_tensors, tensor_leaves


def noncontiguous_copy(t: torch.Tensor) -> torch.Tensor:
    """A strided view (every other element of a larger buffer) holding exactly t's values; a sparse or other
    non-strided tensor has no strides to spread and is returned as it is."""
    if t.layout != torch.strided:
        return t
    if t.dim() == 0 or t.numel() <= 1:
        return t.clone()
    shape = t.shape
    if t.is_quantized:  # torch.full cannot make a quantized buffer: t's values at both positions, t's own qparams
        return torch.stack([t, t], dim=-1).select(-1, 0)
    # 7 everywhere, a value the op would have to read by mistake to show it, then t's values at the even positions
    # of the last dimension: buffer[..., ::2] as a view and a select, cheaper than the slicing (the same tensor)
    buffer = torch.full((*shape[:-1], shape[-1] * 2), 7, dtype=t.dtype, device=t.device)
    view = buffer.view(*shape, 2).select(-1, 0)
    view.copy_(t)
    return view


def channels_last_copy(t: torch.Tensor) -> torch.Tensor:
    if t.layout != torch.strided:
        return t
    if t.dim() == 4:
        return t.contiguous(memory_format=torch.channels_last)
    if t.dim() == 5:
        return t.contiguous(memory_format=torch.channels_last_3d)
    return t


class LayoutMode(Mode):
    @property
    def layout(self) -> str:
        return self.name.split(":", 1)[1]

    def check(self, target: Target, sample: Sample) -> None:
        leaves = tensor_leaves(sample.tree())
        if self.layout == "noncontiguous" and not any(t.numel() > 1 for t in leaves):
            raise NotApplicable("no tensor input with more than one element to lay out non-contiguously")
        if self.layout == "channels_last" and not any(t.dim() in (4, 5) for t in leaves):
            raise NotApplicable("channels_last needs a 4-D or 5-D tensor input")

    def transform(self, t: torch.Tensor) -> torch.Tensor:
        return noncontiguous_copy(t) if self.layout == "noncontiguous" else channels_last_copy(t)

    def run(self, target: Target, sample: Sample) -> Any:
        self.check(target, sample)
        fn = bound_callable(target, sample)
        args, kwargs = map_tensors(sample.tree(), self.transform)
        return fn(*args, **kwargs)

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        if self.layout == "noncontiguous":
            body = '''
    def relayout(t):
        if not isinstance(t, torch.Tensor) or t.dim() == 0 or t.numel() <= 1:
            return t
        buffer = torch.empty(*t.shape[:-1], t.shape[-1] * 2, dtype=t.dtype)
        view = buffer[..., ::2]
        view.copy_(t)
        buffer[..., 1::2].fill_(7)
        return view
'''
        else:
            body = '''
    def relayout(t):
        if isinstance(t, torch.Tensor) and t.dim() == 4:
            return t.contiguous(memory_format=torch.channels_last)
        if isinstance(t, torch.Tensor) and t.dim() == 5:
            return t.contiguous(memory_format=torch.channels_last_3d)
        return t
'''
        return "def run_mode(fn, args, kwargs):" + body + '''
    args, kwargs = torch.utils._pytree.tree_map(relayout, (args, kwargs))
    return fn(*args, **kwargs)
'''


def make_layout(name: str, options: dict) -> Mode:
    if name not in ("layout:noncontiguous", "layout:channels_last"):
        raise KeyError(name)
    return LayoutMode(name=name, options=options)
