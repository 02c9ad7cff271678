"""Run one mode on one input and report ok / not-applicable / exception, never raising."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.base import Mode, NotApplicable, bound_callable
from fuzz_core.target import Target
from fuzz_core.tensors import cast_floating, clone_tree, map_tensors

# A low-precision or other-device kernel that simply does not exist is "not applicable", not a finding.
_UNSUPPORTED_KERNEL = re.compile(
    r"not implemented for '(Half|BFloat16|ComplexHalf)'|\"\w+\" not implemented for|"
    r"does not support (Half|BFloat16|float16|bfloat16)|Unsupported dtype|"
    r"No operator found for|Could not run '[\w:.]+' with arguments from the '\w+' backend|"
    r"Low precision dtypes not supported|doesn't handle types other than float and double|"
    r"must be either float or double dtype|doesn't support tensors of type|"
    r"only supported for half, float and double|Expected both inputs to be Half, Float or Double|"
    r"supports floating point, complex, and integer tensors, but got|"
    r"expected a tensor with 2 or more dimensions of float, double|"
    # gradient modes: an op without a backward formula, or an argument it has none for (a loss's target), has no
    # gradient to compare
    r"the derivative for '[\w.:]+' is not implemented|"
    r"is not differentiable with respect to argument '\w+'")


@dataclass
class Execution:
    status: str  # "ok", "na", "exc"
    output: Any = None
    error: BaseException | None = None

    @property
    def error_text(self) -> str:
        if self.error is None:
            return ""
        first = (str(self.error).strip().splitlines() or [""])[0]
        return f"{type(self.error).__name__}: {first[:300]}"


def execute(mode: Mode, target: Target, sample: Sample, *, reseed: int | None) -> Execution:
    """Run `mode` on a private copy of `sample` (in-place ops must not leak into the other mode's input)."""
    private = Sample(*clone_tree(sample.tree()), ctor=sample.ctor, origin=sample.origin)
    if reseed is not None:
        torch.manual_seed(reseed)
    try:
        with torch.no_grad():
            out = mode.run(target, private)
    except NotApplicable as exc:
        return Execution("na", error=exc)
    except Exception as exc:  # the target's own exception is data, not a tool failure
        if mode.name != "eager" and _UNSUPPORTED_KERNEL.search(str(exc)):
            return Execution("na", error=exc)
        return Execution("exc", error=exc)
    return Execution("ok", output=_detach(out))


def execute_fp64(target: Target, sample: Sample, *, reseed: int | None, mode: Mode | None = None) -> Execution:
    """The float64 reference: eager on inputs (and module parameters) upcast to float64.

    A mode whose output is not the target's value (gradient modes) supplies its own float64
    reference through `fp64_reference` (Note [Gradient fp64 reference] in modes/grad.py).
    """
    tree = cast_floating(sample.tree(), torch.float64)
    if reseed is not None:
        torch.manual_seed(reseed)
    own_reference = getattr(mode, "fp64_reference", None)
    try:
        if own_reference is not None:
            return Execution("ok", output=_detach(own_reference(target, sample)))
        fn = bound_callable(target, sample, dtype=torch.float64 if target.is_module_class else None)
        with torch.no_grad():
            out = fn(*tree[0], **tree[1])
    except Exception as exc:
        return Execution("exc", error=exc)
    return Execution("ok", output=_detach(out))


def _detach(out: Any) -> Any:
    if isinstance(out, torch.Tensor):  # the common case, without the tree walk
        return out.detach()
    return map_tensors(out, lambda t: t.detach())
