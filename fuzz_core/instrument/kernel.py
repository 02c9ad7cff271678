"""Kernel-level records: CUDA event timing when CUDA is present, profiler ranges on CPU."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function


@dataclass
class KernelRecord:
    name: str
    count: int
    self_time_us: float
    total_time_us: float
    device: str

    def to_dict(self) -> dict:
        return {"name": self.name, "count": self.count, "self_time_us": self.self_time_us,
                "total_time_us": self.total_time_us, "device": self.device}


@dataclass
class KernelRecorder:
    """Profile one execution; kernels are the profiler's per-name aggregates.

    On CPU the "kernels" are the ATen CPU ranges the profiler records; with CUDA the device
    kernels are added and the wall time comes from CUDA events (host timers would only see
    the asynchronous launches). Given a model, every submodule's forward also runs inside a
    profiler range named "module::<qualified name>", so time is attributed to modules too.
    """

    range_name: str = "transfuzz.execution"
    use_cuda: bool = field(default_factory=torch.cuda.is_available)
    model: nn.Module | None = None
    kernels: list[KernelRecord] = field(default_factory=list)
    elapsed_ms: float = 0.0
    _prof: object = None
    _range: object = None
    _events: tuple | None = None
    _t0: float = 0.0
    _handles: list = field(default_factory=list)
    _open_ranges: list = field(default_factory=list)

    def _add_module_ranges(self) -> None:
        assert self.model is not None
        for name, module in self.model.named_modules():
            label = f"module::{name or '<root>'}"

            def pre(mod: nn.Module, args: tuple, label: str = label) -> None:
                rng = record_function(label)
                rng.__enter__()
                self._open_ranges.append(rng)

            def post(mod: nn.Module, args: tuple, out: object) -> None:
                if self._open_ranges:
                    self._open_ranges.pop().__exit__(None, None, None)

            self._handles.append(module.register_forward_pre_hook(pre))
            self._handles.append(module.register_forward_hook(post))

    def __enter__(self) -> KernelRecorder:
        activities = [ProfilerActivity.CPU]
        if self.use_cuda:
            activities.append(ProfilerActivity.CUDA)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            self._events = (start, end)
        self._prof = profile(activities=activities, record_shapes=False)
        self._prof.__enter__()
        if self.model is not None:
            self._add_module_ranges()
        self._range = record_function(self.range_name)
        self._range.__enter__()
        if self._events:
            self._events[0].record()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._events:
            self._events[1].record()
            torch.cuda.synchronize()
            self.elapsed_ms = float(self._events[0].elapsed_time(self._events[1]))
        else:
            self.elapsed_ms = (time.perf_counter() - self._t0) * 1000.0
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        while self._open_ranges:  # a module that raised never closed its range
            self._open_ranges.pop().__exit__(None, None, None)
        self._range.__exit__(*exc)
        self._prof.__exit__(*exc)
        self.kernels = []
        for avg in self._prof.key_averages():
            if avg.key == self.range_name:
                continue
            device_total = float(getattr(avg, "device_time_total", 0.0) or 0.0)
            on_device = self.use_cuda and device_total > 0
            self.kernels.append(
                KernelRecord(
                    name=avg.key,
                    count=int(avg.count),
                    self_time_us=float(avg.self_device_time_total if on_device else avg.self_cpu_time_total),
                    total_time_us=device_total if on_device else float(avg.cpu_time_total),
                    device="cuda" if on_device else "cpu",
                )
            )
        self.kernels.sort(key=lambda k: k.self_time_us, reverse=True)
