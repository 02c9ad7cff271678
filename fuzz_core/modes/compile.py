"""`compile:<backend>`: torch.compile of the target, one compiled callable per call structure, reused across inputs."""

from __future__ import annotations

from typing import Any

import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.base import Mode, NotApplicable, bound_callable
from fuzz_core.target import Target
from fuzz_core.tensors import split_tensors, structure_key

COMPILE_OPTIONS = ("dynamic", "mode", "fullgraph")
_COMPILED: dict[str, Any] = {}
_configured = False


def configure_dynamo() -> None:
    """Settings every differential run of compiled code needs (see false_alarms.md: RNG, recompiles)."""
    global _configured
    if _configured:
        return
    import torch._dynamo.config as dynamo_config
    import torch._inductor.config as inductor_config

    # Random ops must draw the same numbers as eager, or every random op is a false alarm.
    inductor_config.fallback_random = True
    # Compile once, run many: after the first recompilation for a new size, dynamo marks the sizes that
    # changed dynamic (automatic dynamic shapes), so later shape mutations reuse one dynamic graph.
    dynamo_config.automatic_dynamic_shapes = True
    # Each structure gets its own code object, but shapes of one structure still recompile; a silent
    # fall-back to eager after the limit would hide bugs, so allow many.
    dynamo_config.recompile_limit = 64
    dynamo_config.accumulated_recompile_limit = 4096
    _configured = True


# Note [Stale closure tensors]
# A first version rebuilt (args, kwargs) from a template that still held the first call's input
# tensors. torch 2.13's dynamo then bound later inputs to those captured tensors and returned results
# computed from stale values on every later call, for every backend, without recompiling. The
# template now holds index placeholders only (fuzz_core.tensors.split_tensors).
def _fresh_wrapper(fn: Any, rebuild: Any) -> Any:
    """A wrapper with its own code object, so dynamo caches (and limits) it separately per structure."""
    namespace: dict[str, Any] = {"_fn": fn, "_rebuild": rebuild}
    exec(compile("def _compiled_entry(*ts):\n    a, k = _rebuild(list(ts))\n    return _fn(*a, **k)\n",
                 "<transfuzz-compile>", "exec"), namespace)
    return namespace["_compiled_entry"]


class CompileMode(Mode):
    dispatch_observable = False

    # Compilations (first calls and recompilations) this mode has triggered: the campaign books the
    # time of a call that compiled as compile time, apart from execution time.
    compiles = 0

    @property
    def backend(self) -> str:
        return self.name.split(":", 1)[1]

    def check(self, target: Target, sample: Sample) -> None:
        from torch._dynamo.backends.registry import list_backends

        known = set(list_backends(exclude_tags=())) | {"eager", "aot_eager", "inductor"}
        if self.backend not in known:
            raise NotApplicable(f"no compile backend named {self.backend!r}")

    def run(self, target: Target, sample: Sample) -> Any:
        configure_dynamo()
        fn = bound_callable(target, sample)
        tensors, rebuild = split_tensors(sample.tree())
        key = f"{self.name}|{sorted(self.options.items())}|{target.api}|{id(fn)}|" + structure_key(
            sample.tree(), with_shapes=False)
        compiled = _COMPILED.get(key)
        if compiled is None:
            kwargs = {k: self.options[k] for k in COMPILE_OPTIONS if k in self.options}
            compiled = torch.compile(_fresh_wrapper(fn, rebuild), backend=self.backend, **kwargs)
            _COMPILED[key] = compiled
        from torch._dynamo.utils import counters

        frames = counters["frames"]["total"]
        try:
            return compiled(*tensors)
        finally:
            if counters["frames"]["total"] != frames:
                self.compiles += 1

    def config(self) -> dict[str, Any]:
        import torch._inductor.config as inductor_config

        return {"backend": self.backend, **self.options, "fallback_random": inductor_config.fallback_random}

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        options = {k: self.options[k] for k in COMPILE_OPTIONS if k in self.options}
        kwargs = ", ".join(f"{k}={v!r}" for k, v in options.items() if k != "dynamic")
        extra = f", {kwargs}" if kwargs else ""
        # The fuzzer's compiled callable may have seen other shapes first, after which dynamo
        # recompiles with dynamic shapes; the script retries with dynamic=True (RETRY_DYNAMIC).
        return f'''
import torch._inductor.config
torch._inductor.config.fallback_random = True
COMPILE_DYNAMIC = {options.get("dynamic")!r}
RETRY_DYNAMIC = {"dynamic" not in options}

def run_mode(fn, args, kwargs):
    compiled = torch.compile(lambda *a, **k: fn(*a, **k), backend={self.backend!r}, dynamic=COMPILE_DYNAMIC{extra})
    return compiled(*args, **kwargs)
'''


def make_compile(name: str, options: dict) -> Mode:
    if ":" not in name:
        raise NotApplicable("compile needs a backend, e.g. compile:inductor")
    return CompileMode(name=name, options=options)
