"""One entry point for the three instrumentation levels: none, module, op, kernel."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from torch import nn

from fuzz_core.instrument.kernel import KernelRecorder
from fuzz_core.instrument.modules import ModuleRecorder
from fuzz_core.instrument.ops import OpRecorder

LEVELS = ("none", "module", "op", "kernel")


@dataclass
class InstrumentReport:
    """What one instrumented execution recorded, as evidence reports can store."""

    level: str
    modules: ModuleRecorder | None = None
    ops: OpRecorder | None = None
    kernel: KernelRecorder | None = None
    extra: dict = field(default_factory=dict)

    def to_dict(self, max_records: int = 200) -> dict:
        out: dict[str, Any] = {"level": self.level}
        if self.modules is not None:
            out["modules"] = [c.to_dict() for c in self.modules.calls[:max_records]]
            out["module_count"] = len(self.modules.calls)
            first = self.modules.first_nonfinite()
            out["first_nonfinite_module"] = first.name if first else None
        if self.ops is not None:
            out["ops"] = [r.to_dict() for r in self.ops.records[:max_records]]
            out["op_count"] = len(self.ops.records)
            first_op = self.ops.first_nonfinite()
            out["first_nonfinite_op"] = first_op.to_dict() if first_op else None
        if self.kernel is not None:
            out["kernels"] = [k.to_dict() for k in self.kernel.kernels[:max_records]]
            out["elapsed_ms"] = self.kernel.elapsed_ms
        return out


def check_level(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"unknown instrumentation level {level!r}; choose one of {', '.join(LEVELS)}")
    return level


@contextlib.contextmanager
def instrumented(level: str, model: nn.Module | None = None) -> Iterator[InstrumentReport]:
    """Record at `level` whatever runs inside the block.

    "module" needs the model (hooks go on its submodules); without one it records nothing
    at module level rather than guessing.
    """
    report = InstrumentReport(level=check_level(level))
    with contextlib.ExitStack() as stack:
        if level == "module" and model is not None:
            report.modules = stack.enter_context(ModuleRecorder(model))
        elif level == "op":
            report.ops = stack.enter_context(OpRecorder())
        elif level == "kernel":
            report.kernel = stack.enter_context(KernelRecorder(model=model))
        yield report


def run_instrumented(fn: Callable[..., Any], args: tuple, level: str,
                     model: nn.Module | None = None) -> tuple[Any, InstrumentReport]:
    """Call fn(*args) under the chosen level; return its output and the report."""
    with instrumented(level, model) as report:
        out = fn(*args)
    return out, report
