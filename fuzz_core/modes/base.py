"""The mode protocol: how a mode runs a target on a sample, and when it cannot apply."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import torch

from fuzz_core.inputs import Sample
from fuzz_core.target import Target


class NotApplicable(Exception):
    """This mode cannot apply to this API or input (e.g. no out= variant, no CUDA)."""


@dataclass
class Mode:
    """Base mode: plain eager execution. Subclasses override `run` and the hooks they need."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)
    # dtype the test mode's result is computed in, when it differs from the input dtype.
    compute_dtype: torch.dtype | None = None
    compares_dtype: bool = True  # a dtype difference in the output is a finding
    compares_strides: bool = False
    # False where the mode builds a graph (tracing, scripting, compiling): a TorchDispatchMode around
    # it would be traced into the graph or break it, so op-level coverage is not recorded there.
    dispatch_observable: ClassVar[bool] = True
    # True where `run` hands the input's tensors to the target and does nothing else with them: execute may then
    # skip its private copy for targets that cannot write to their inputs (Note [Input copies] in
    # fuzz_core/execution.py). Off by default: a mode that writes (variant:inplace) or compiles stays copied.
    passes_inputs_through: ClassVar[bool] = False

    def check(self, target: Target, sample: Sample) -> None:
        """Raise NotApplicable when the mode cannot apply to this target (before any execution)."""

    def canonicalize(self, sample: Sample) -> Sample:
        """Make the input fair to both modes (e.g. round to fp16 first); default unchanged."""
        return sample

    def run(self, target: Target, sample: Sample) -> Any:
        fn = bound_callable(target, sample)
        return fn(*sample.args, **sample.kwargs)

    def config(self) -> dict[str, Any]:
        """Flags that matter for a report (torch config, options)."""
        return dict(self.options)

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        """Python source defining `run_mode(fn, args, kwargs)` with plain torch, for repro scripts."""
        return "def run_mode(fn, args, kwargs):\n    return fn(*args, **kwargs)\n"


_MODULE_CACHE: dict[tuple[int, str], torch.nn.Module] = {}


def _materialise_lazy(module: torch.nn.Module, sample: Sample) -> None:
    """Lazy modules (nn.LazyLinear ...) size their parameters on the first call: make that call here,
    still under the fixed seed, so every mode gets the same materialised weights."""
    from torch.nn.modules.lazy import LazyModuleMixin

    if isinstance(module, LazyModuleMixin) and module.has_uninitialized_params():
        with torch.no_grad():
            module(*sample.args, **sample.kwargs)


def bound_callable(target: Target, sample: Sample, dtype: torch.dtype | None = None) -> Callable[..., Any]:
    """The function to call: the target itself, or an nn.Module built (seeded, eval mode) from the sample's ctor."""
    if not target.is_module_class:
        return target.fn
    key = (id(target.fn), repr(sorted((sample.ctor or {}).items())) + str(dtype))
    module = _MODULE_CACHE.get(key)
    if module is None:
        base_key = (id(target.fn), repr(sorted((sample.ctor or {}).items())) + "None")
        base = _MODULE_CACHE.get(base_key)
        if base is None:
            rng_state = torch.random.get_rng_state()
            torch.manual_seed(0)  # same weights in every mode and every worker
            try:
                base = target.fn(**(sample.ctor or {})).eval()
                _materialise_lazy(base, sample)
                # Parameters are inputs, not trainable weights, here (jit.trace refuses grad constants).
                base.requires_grad_(False)
            finally:
                torch.random.set_rng_state(rng_state)
            _MODULE_CACHE[base_key] = base
        module = base if dtype is None else copy.deepcopy(base).to(dtype)
        _MODULE_CACHE[key] = module
        if len(_MODULE_CACHE) > 64:
            _MODULE_CACHE.pop(next(iter(_MODULE_CACHE)))
    return module
