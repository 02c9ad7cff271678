"""What the fuzz loop executes: a batch in, coverage vectors and objective flags out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch
from torch import nn

from fuzz_core.cgf.objectives import Objective, Observation
from fuzz_core.coverage.features import ActivationCapture, resolve_layers
from fuzz_core.instrument.levels import InstrumentReport, check_level, instrumented

COVERAGE_KINDS = ("activations", "abs_sum")


@dataclass
class Fetch:
    coverage: np.ndarray  # [batch, D]
    hits: np.ndarray  # [batch] bool
    observation: Observation


class FuzzTarget(Protocol):
    def fetch(self, batch: torch.Tensor) -> Fetch:
        ...


@dataclass
class ModelTarget:
    """An nn.Module under an objective, with coverage from chosen layers.

    coverage "activations": the chosen layers' outputs (the model output when none are
    chosen), TensorFuzz's raw-logit coverage; "abs_sum": their summed magnitude per element,
    TensorFuzz's all-logit coverage, a 1-D signal that rewards moving to new magnitudes.
    `test_fn` is the second mode for disagreement objectives (fp16 copy, quantized copy,
    compiled model, another version). `instrument` records every execution at that level
    (the last report is kept); at "op" level the (op, dtype, layout) triples reached
    accumulate in `op_keys`.
    """

    model: nn.Module
    objective: Objective
    coverage_layers: Sequence[str] = ()
    test_fn: Callable[[torch.Tensor], object] | None = None
    coverage: str = "activations"
    instrument: str = "none"
    executions: int = 0
    op_keys: set[tuple[str, str, str]] = field(default_factory=set)
    last_report: InstrumentReport | None = None

    def __post_init__(self) -> None:
        if self.coverage not in COVERAGE_KINDS:
            raise ValueError(f"unknown coverage {self.coverage!r}; choose one of {', '.join(COVERAGE_KINDS)}")
        resolve_layers(self.model, self.coverage_layers)  # fail early on a bad layer name
        check_level(self.instrument)

    def fetch(self, batch: torch.Tensor) -> Fetch:
        with (torch.no_grad(), instrumented(self.instrument, self.model) as report,
              ActivationCapture(self.model, self.coverage_layers) as capture):
            output = self.model(batch)
            features = capture.features(output, batch.shape[0])
            activations = dict(capture.latest)
        if report.ops is not None:
            self.op_keys.update((r.op, r.output_dtypes[0] if r.output_dtypes else "-",
                                 r.output_layouts[0] if r.output_layouts else "-") for r in report.ops.records)
        self.last_report = report
        test_output = None
        if self.test_fn is not None:
            with torch.no_grad():
                test_output = self.test_fn(batch)
        if self.coverage == "abs_sum":
            features = np.nan_to_num(np.abs(features), nan=0.0).sum(axis=1, keepdims=True)
        obs = Observation(batch=batch, output=output, activations=activations, test_output=test_output)
        self.executions += batch.shape[0]
        return Fetch(coverage=features, hits=self.objective(obs), observation=obs)
