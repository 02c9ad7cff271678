"""Assemble a finding's evidence: diffs, fp64 errors, saved inputs, backend ablation, torch version and config."""

from __future__ import annotations

import math
import os
from typing import Any

import torch

from fuzz_core.execution import execute
from fuzz_core.inputs import Sample
from fuzz_core.modes import get_mode
from fuzz_core.oracles import compare_outputs
from fuzz_core.target import Target
from fuzz_core.tensors import tensor_leaves

ABLATION_BACKENDS = ("compile:eager", "compile:aot_eager", "compile:inductor")


def json_number(value: Any) -> Any:
    """JSON has no inf/nan: write them as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def backend_ablation(target: Target, sample: Sample, options: dict[str, Any], reseed: int | None,
                     test_mode: str = "compile:inductor") -> dict[str, str]:
    """Which compile backends differ from eager on this input: 'matches', 'differs' or 'raises: ...'."""
    reference = execute(get_mode("eager"), target, sample, reseed=reseed)
    verdicts: dict[str, str] = {}
    names = ABLATION_BACKENDS + ((test_mode,) if test_mode not in ABLATION_BACKENDS else ())
    for name in names:
        run = execute(get_mode(name, options), target, sample, reseed=reseed)
        if run.status != "ok":
            verdicts[name.split(":", 1)[1]] = f"raises: {run.error_text}" if run.status == "exc" else "not applicable"
            continue
        same = compare_outputs(reference.output, run.output, returns_indices=target.returns_indices,
                               inputs=tensor_leaves(sample.tree())).ok
        verdicts[name.split(":", 1)[1]] = "matches" if same else "differs"
    return verdicts


def config_flags() -> dict[str, Any]:
    flags: dict[str, Any] = {
        "num_threads": torch.get_num_threads(),
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "default_dtype": str(torch.get_default_dtype()),
        "cuda_available": torch.cuda.is_available(),
    }
    try:
        import torch._inductor.config as inductor_config

        flags["inductor.fallback_random"] = inductor_config.fallback_random
    except Exception:  # pragma: no cover - inductor always ships with torch >= 2.0
        pass
    if os.environ.get("OMP_NUM_THREADS"):
        flags["OMP_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"]
    return flags


def describe_sample(sample: Sample) -> dict[str, Any]:
    return {
        "origin": sample.origin,
        "tensors": [{"shape": list(t.shape), "dtype": str(t.dtype), "stride": list(t.stride()),
                     "contiguous": t.is_contiguous()} for t in tensor_leaves(sample.tree())],
        "ctor": sample.ctor,
    }
