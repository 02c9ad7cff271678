"""Instrumentation of one execution at module, ATen-op or kernel level."""

from fuzz_core.instrument.kernel import KernelRecord, KernelRecorder
from fuzz_core.instrument.levels import LEVELS, InstrumentReport, instrumented, run_instrumented
from fuzz_core.instrument.modules import ModuleCall, ModuleRecorder
from fuzz_core.instrument.ops import OpRecord, OpRecorder
from fuzz_core.instrument.stats import TensorStats, tensor_stats

__all__ = [
    "LEVELS", "InstrumentReport", "KernelRecord", "KernelRecorder", "ModuleCall", "ModuleRecorder",
    "OpRecord", "OpRecorder", "TensorStats", "instrumented", "run_instrumented", "tensor_stats",
]
