"""`device:cuda`: the target on a GPU against the CPU; not applicable where CUDA is absent."""

from __future__ import annotations

from typing import Any

import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.base import Mode, NotApplicable, bound_callable
from fuzz_core.target import Target
from fuzz_core.tensors import map_tensors


class DeviceMode(Mode):
    @property
    def device(self) -> str:
        return self.name.split(":", 1)[1]

    def check(self, target: Target, sample: Sample) -> None:
        if self.device == "cuda" and not torch.cuda.is_available():
            raise NotApplicable("CUDA is not available on this machine")

    def run(self, target: Target, sample: Sample) -> Any:
        self.check(target, sample)
        fn = bound_callable(target, sample)
        if isinstance(fn, torch.nn.Module):
            import copy

            fn = copy.deepcopy(fn).to(self.device)
        args, kwargs = map_tensors(sample.tree(), lambda t: t.to(self.device))
        out = fn(*args, **kwargs)
        return map_tensors(out, lambda t: t.cpu())

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        return f'''
def run_mode(fn, args, kwargs):
    if isinstance(fn, torch.nn.Module):
        import copy
        fn = copy.deepcopy(fn).to({self.device!r})
    move = lambda t: t.to({self.device!r}) if isinstance(t, torch.Tensor) else t
    args, kwargs = torch.utils._pytree.tree_map(move, (args, kwargs))
    out = fn(*args, **kwargs)
    return torch.utils._pytree.tree_map(lambda t: t.cpu() if isinstance(t, torch.Tensor) else t, out)
'''


def make_device(name: str, options: dict) -> Mode:
    if name != "device:cuda":
        raise KeyError(name)
    return DeviceMode(name=name, options=options)
