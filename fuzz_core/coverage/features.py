"""Feature vectors for coverage: chosen layer activations of a model, or output summaries."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from fuzz_core.instrument.stats import flat_tensors


def resolve_layers(model: nn.Module, names: Sequence[str]) -> dict[str, nn.Module]:
    """Look up submodules by qualified name; a clear error lists what exists."""
    modules = dict(model.named_modules())
    missing = [n for n in names if n not in modules]
    if missing:
        known = ", ".join(n or "<root>" for n in list(modules)[:30])
        raise ValueError(f"unknown layer(s) {', '.join(missing)}; the model has: {known}")
    return {n: modules[n] for n in names}


@dataclass
class ActivationCapture:
    """Forward hooks that keep the latest output of each chosen layer (batch-first).

    With no layer names the model's own output is the feature, TensorFuzz's raw-logit coverage.
    """

    model: nn.Module
    layers: Sequence[str] = ()
    latest: dict[str, torch.Tensor] = field(default_factory=dict)
    _handles: list = field(default_factory=list)

    def __enter__(self) -> ActivationCapture:
        for name, module in resolve_layers(self.model, self.layers).items():
            self._handles.append(module.register_forward_hook(self._hook(name)))
        return self

    def __exit__(self, *exc: object) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()

    def _hook(self, name: str):  # type: ignore[no-untyped-def]
        def hook(module: nn.Module, args: tuple, output: object) -> None:
            tensors = flat_tensors(output)
            if tensors:
                # No .detach(): the fetch runs under no_grad, and a detach would show up
                # as an extra op in any op-level recording around the execution.
                self.latest[name] = tensors[0]

        return hook

    def features(self, output: object, batch: int) -> np.ndarray:
        """[batch, D] float64 features: chosen activations concatenated, else the output."""
        if self.layers:
            parts = [self.latest[n] for n in self.layers if n in self.latest]
        else:
            parts = flat_tensors(output)[:1]
        if not parts:
            raise ValueError("no activation captured for coverage; check --coverage-layers")
        return np.concatenate([_batch_rows(p, batch) for p in parts], axis=1)


def _batch_rows(t: torch.Tensor, batch: int) -> np.ndarray:
    if t.is_quantized:
        t = t.dequantize()
    x = t.detach().to(torch.float64).cpu()
    if x.dim() == 0 or x.shape[0] != batch:
        # Not batch-first: every element shares the same activation summary.
        return np.tile(x.reshape(1, -1).numpy(), (batch, 1))
    return x.reshape(batch, -1).numpy()


_NUMPY_DTYPES = (torch.float32, torch.float64, torch.float16, torch.int64, torch.int32, torch.int16, torch.int8,
                 torch.uint8, torch.bool)  # dtypes numpy views as they are


def summary_features(obj: object) -> np.ndarray:
    """A fixed-length summary of every tensor in an API output (or intermediate list).

    Per tensor: mean, std, min, max, mean |x|, fraction finite, fraction zero; non-float
    tensors are summarised after conversion. Works for any output shape, so API harnesses
    with varying shapes share one coverage space.

    Every measured input of a campaign pays this (Note [Sampled coverage] in fuzz_core/cgf/selector.py), so the
    statistics are numpy's on the float64 copy (a microsecond a reduction on small outputs, where each torch call
    cost several): the same statistics (std with Bessel's correction, as torch's), to the last bits a different
    summation order gives. Where every element is finite the boolean selection is skipped.
    """
    rows = []
    for t in flat_tensors(obj):
        if t.is_quantized:
            t = t.dequantize()
        if t.is_complex():
            t = torch.view_as_real(t)
        if t.device.type == "cpu" and t.dtype in _NUMPY_DTYPES:
            a = t.detach().numpy().astype(np.float64).reshape(-1)  # one copy, in float64
        else:
            a = t.detach().to(torch.float64).reshape(-1).cpu().numpy()
        n = a.size
        if n == 0:
            rows.append([0.0] * 7)
            continue
        # numpy's reductions on the float64 copy: about a microsecond each on small outputs, where a torch call costs
        # several; the mean and the (Bessel-corrected, as torch's) std in two passes, as numpy's own std makes them
        finite = np.isfinite(a)
        all_finite = bool(finite.all())
        fx = a if all_finite else a[finite]
        count = n if all_finite else fx.size
        zero = float(np.count_nonzero(a == 0)) / n
        if count == 0:
            rows.append([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, zero])
            continue
        with np.errstate(over="ignore", invalid="ignore"):  # huge finite values overflow to inf, as torch's do
            mean = float(fx.sum()) / count
            deviation = fx - mean
            std = math.sqrt(float(np.dot(deviation, deviation)) / (count - 1)) if count > 1 else 0.0
            mean_abs = float(np.abs(fx).sum()) / count
        rows.append([mean, std, float(fx.min()), float(fx.max()), mean_abs, 1.0 if all_finite else count / n, zero])
    if not rows:
        return np.zeros(7)
    return np.asarray(rows, dtype=np.float64).reshape(-1)
