"""Seed inputs from harness code that defines `make_inputs(seed) -> (args, kwargs)`.

For an nn.Module class the code may also define a dict CONSTRUCTOR_KWARGS (default: none).
"""

from __future__ import annotations

from fuzz_core.inputs import InputError, Sample
from fuzz_core.target import Target


def code_samples(target: Target, seed: int, max_samples: int) -> list[Sample]:
    make_inputs = target.namespace.get("make_inputs")
    if make_inputs is None:
        raise InputError("harness code defines no make_inputs(seed)")
    ctor = dict(target.namespace.get("CONSTRUCTOR_KWARGS") or {}) if target.is_module_class else None
    samples = []
    for i in range(max(1, min(max_samples, 4))):
        try:
            produced = make_inputs(seed + i)
        except Exception as exc:
            raise InputError(f"make_inputs({seed + i}) failed: {type(exc).__name__}: {exc}") from exc
        if not (isinstance(produced, tuple) and len(produced) == 2):
            raise InputError("make_inputs must return (args, kwargs)")
        args, kwargs = produced
        samples.append(Sample(args=tuple(args), kwargs=dict(kwargs or {}), ctor=ctor, origin=f"code:{seed + i}"))
    return samples
