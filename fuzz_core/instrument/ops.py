"""ATen-op level records of one execution, taken with a TorchDispatchMode."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from fuzz_core.instrument.stats import TensorStats, all_finite, tensor_stats


@dataclass
class OpRecord:
    index: int
    op: str
    input_shapes: list[tuple[int, ...]]
    input_dtypes: list[str]
    output_shapes: list[tuple[int, ...]]
    output_dtypes: list[str]
    output_layouts: list[str]
    output_stats: list[TensorStats]
    inputs_finite: bool
    outputs_finite: bool
    # Kept only when the recorder was asked to (localisation compares them across modes).
    inputs: list[torch.Tensor] | None = None
    outputs: list[torch.Tensor] | None = None

    @property
    def nonfinite_from_finite(self) -> bool:
        """This op turned finite inputs into a NaN or an Inf: where a NaN is born."""
        return self.inputs_finite and not self.outputs_finite

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "op": self.op,
            "input_shapes": [list(s) for s in self.input_shapes],
            "input_dtypes": self.input_dtypes,
            "output_shapes": [list(s) for s in self.output_shapes],
            "output_dtypes": self.output_dtypes,
            "output_layouts": self.output_layouts,
            "output_stats": [s.to_dict() for s in self.output_stats],
            "nonfinite_from_finite": self.nonfinite_from_finite,
        }


def _tensors(obj: object) -> list[torch.Tensor]:
    leaves, _ = tree_flatten(obj)
    return [x for x in leaves if isinstance(x, torch.Tensor)]


def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


@dataclass
class OpRecorder(TorchDispatchMode):
    """Record every ATen op an execution dispatches; use as a context manager.

    `with_stats` computes output statistics per op (a few reductions each, the main cost);
    `keep_tensors` keeps detached copies of op inputs and outputs for cross-mode comparison.
    """

    with_stats: bool = True
    keep_tensors: bool = False
    records: list[OpRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        ins = _tensors((args, kwargs))
        # Record inputs before the call: in-place ops overwrite them.
        inputs_finite = all_finite(ins)
        kept_inputs = [t.detach().clone() for t in ins] if self.keep_tensors else None
        out = func(*args, **kwargs)
        outs = _tensors(out)
        self.records.append(
            OpRecord(
                index=len(self.records),
                op=str(func),
                input_shapes=[tuple(int(s) for s in t.shape) for t in ins],
                input_dtypes=[_dtype(t) for t in ins],
                output_shapes=[tuple(int(s) for s in t.shape) for t in outs],
                output_dtypes=[_dtype(t) for t in outs],
                output_layouts=[str(t.layout).removeprefix("torch.") for t in outs],
                output_stats=[tensor_stats(t) for t in outs] if self.with_stats else [],
                inputs_finite=inputs_finite,
                outputs_finite=all_finite(outs),
                inputs=kept_inputs,
                outputs=[t.detach().clone() for t in outs] if self.keep_tensors else None,
            )
        )
        return out

    def first_nonfinite(self) -> OpRecord | None:
        """The first op that produced a non-finite value from finite inputs."""
        return next((r for r in self.records if r.nonfinite_from_finite), None)
