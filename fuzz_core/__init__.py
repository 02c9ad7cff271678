"""fuzz_core: the differential execution engine (modes, oracles, inputs, mutators, campaign, sandboxed workers).

It imports only torch, numpy and the standard library; give it a HarnessSpec, get a HarnessResult.
"""

from __future__ import annotations

from fuzz_core.kinds import KIND_MODE_PAIRS, resolve_kind
from fuzz_core.result import HarnessResult
from fuzz_core.spec import HarnessSpec


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    # run_harness and WorkerPool import torch; keep `import fuzz_core` cheap for the CLI and the pipeline.
    if name == "run_harness":
        from fuzz_core.runner import run_harness

        return run_harness
    if name == "WorkerPool":
        from fuzz_core.workers import WorkerPool

        return WorkerPool
    raise AttributeError(name)


__all__ = ["HarnessSpec", "HarnessResult", "run_harness", "WorkerPool", "KIND_MODE_PAIRS", "resolve_kind"]
