"""Feature vectors for coverage: chosen layer activations of a model, or output summaries."""

from __future__ import annotations

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


def summary_features(obj: object) -> np.ndarray:
    """A fixed-length summary of every tensor in an API output (or intermediate list).

    Per tensor: mean, std, min, max, mean |x|, fraction finite, fraction zero; non-float
    tensors are summarised after conversion. Works for any output shape, so API harnesses
    with varying shapes share one coverage space.

    Every measured input of a campaign pays this (Note [Sampled coverage] in fuzz_core/cgf/selector.py), so
    the common case takes fewer torch calls for the same values: where every element is finite (and the
    flattened copy contiguous) the finite elements are the tensor itself, in the same order, so the boolean
    selection is skipped and the finite fraction is exactly 1.0 (n ones summed, divided by n); min and max
    come from one aminmax (exact either way).
    """
    rows = []
    for t in flat_tensors(obj):
        if t.is_quantized:
            t = t.dequantize()
        if t.is_complex():
            t = torch.view_as_real(t)
        x = t.detach().to(torch.float64).reshape(-1).cpu()
        n = x.numel()
        if n == 0:
            rows.append([0.0] * 7)
            continue
        finite = torch.isfinite(x)
        all_finite = bool(finite.all()) and x.is_contiguous()
        fx = x if all_finite else x[finite]
        count = n if all_finite else fx.numel()
        if count == 0:
            rows.append([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, float((x == 0).double().mean())])
            continue
        low, high = torch.aminmax(fx)
        rows.append([
            float(fx.mean()), float(fx.std()) if count > 1 else 0.0, float(low),
            float(high), float(fx.abs().mean()), 1.0 if all_finite else float(finite.double().mean()),
            float((x == 0).double().mean()),
        ])
    if not rows:
        return np.zeros(7)
    return np.asarray(rows, dtype=np.float64).reshape(-1)
