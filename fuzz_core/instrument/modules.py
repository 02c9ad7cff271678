"""Module-level records of one forward pass: call topology and per-module output statistics."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from fuzz_core.instrument.stats import TensorStats, all_finite, flat_tensors, tensor_stats


@dataclass
class ModuleCall:
    order: int  # completion order (post-order): a child finishes before its parent
    name: str  # qualified name inside the root module ("" is the root)
    type: str
    depth: int
    parent: str | None  # the module whose forward was running when this one was called
    call_index: int  # start order (pre-order)
    output_stats: list[TensorStats]
    inputs_finite: bool
    outputs_finite: bool
    outputs: list[torch.Tensor] | None = None

    @property
    def nonfinite_from_finite(self) -> bool:
        return self.inputs_finite and not self.outputs_finite

    def to_dict(self) -> dict:
        return {
            "order": self.order,
            "name": self.name,
            "type": self.type,
            "depth": self.depth,
            "parent": self.parent,
            "call_index": self.call_index,
            "output_stats": [s.to_dict() for s in self.output_stats],
            "nonfinite_from_finite": self.nonfinite_from_finite,
        }


@dataclass
class ModuleRecorder:
    """Forward hooks on every submodule of `model`; use as a context manager around the call."""

    model: nn.Module
    with_stats: bool = True
    keep_tensors: bool = False
    calls: list[ModuleCall] = field(default_factory=list)
    _handles: list = field(default_factory=list)
    _stack: list[tuple[str, int, bool]] = field(default_factory=list)
    _started: int = 0

    def __enter__(self) -> ModuleRecorder:
        for name, module in self.model.named_modules():
            self._handles.append(module.register_forward_pre_hook(self._pre_hook(name)))
            self._handles.append(module.register_forward_hook(self._post_hook(name, module)))
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._stack.clear()

    def _pre_hook(self, name: str):  # type: ignore[no-untyped-def]
        def hook(module: nn.Module, args: tuple) -> None:
            self._stack.append((name, self._started, all_finite(flat_tensors(args))))
            self._started += 1

        return hook

    def _post_hook(self, name: str, module: nn.Module):  # type: ignore[no-untyped-def]
        def hook(mod: nn.Module, args: tuple, output: object) -> None:
            # A module that raised never reaches here; pop down to our own frame.
            while self._stack and self._stack[-1][0] != name:
                self._stack.pop()
            _, call_index, inputs_finite = self._stack.pop() if self._stack else (name, -1, True)
            outs = flat_tensors(output)
            self.calls.append(
                ModuleCall(
                    order=len(self.calls),
                    name=name,
                    type=type(module).__name__,
                    depth=len(self._stack),
                    parent=self._stack[-1][0] if self._stack else None,
                    call_index=call_index,
                    output_stats=[tensor_stats(t) for t in outs] if self.with_stats else [],
                    inputs_finite=inputs_finite,
                    outputs_finite=all_finite(outs),
                    outputs=[t.detach().clone() for t in outs] if self.keep_tensors else None,
                )
            )

        return hook

    def topology(self) -> list[tuple[str | None, str]]:
        """(parent, child) call edges in start order."""
        return [(c.parent, c.name) for c in sorted(self.calls, key=lambda c: c.call_index)]

    def first_nonfinite(self) -> ModuleCall | None:
        """The innermost, earliest module that turned finite inputs into NaN/Inf."""
        return next((c for c in self.calls if c.nonfinite_from_finite), None)
