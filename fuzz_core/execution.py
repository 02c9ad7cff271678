"""Run one mode on one input and report ok / not-applicable / exception, never raising."""

from __future__ import annotations

import re
import types
from dataclasses import dataclass
from typing import Any

import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.base import Mode, NotApplicable, bound_callable
from fuzz_core.target import Target
from fuzz_core.tensors import cast_floating, clone_tree, map_tensors, tensor_leaves

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


# A low-precision mode cast an argument the op only takes in float32/64 (a quantized op's float parameters): read only
# for modes that cast (compute_dtype); out of any other mode it is that mode's own error. The reverse ("expected Half
# but found Float": the op made a float32 tensor from half inputs) stays a finding.
_FLOAT_ONLY_ARGUMENT = re.compile(r"expected scalar type (?:Float|Double) but found (?:Half|BFloat16)")


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


# Note [Input copies]
# Each mode runs on a private copy of the input, so that an op that writes into its input (add_, out=, a module
# with inplace=True, harness code) cannot leak into the other mode's input or into the corpus. The copy is left
# out only where nothing can write: the mode passes the input's tensors straight to the target (EagerMode,
# jit.trace, jit.script: `Mode.passes_inputs_through`), and the target is a builtin torch function or Tensor
# method whose ATen schema (every overload of the packet of that name) neither writes to nor aliases an
# argument and returns no alias of one, called without `out=`/`inplace`. Python functions (F.relu6, harness
# code, OpInfo lambdas), modules, private `_ops` (some carry incomplete schemas: _copy_from writes `dst`),
# views and anything unknown are copied. Compiled modes always copy: a miscompiled kernel that writes into its
# input buffers must not change the corpus. After an uncopied run the inputs' version counters are checked: a
# write the schema did not announce marks the target as writing (copied from then on) and the input as not
# applicable (its two runs did not see the same input).
_PURE: dict[Any, frozenset[str] | None] = {}  # target fn -> names of its out= arguments, or None: not pure
_BUILTIN_KINDS = (types.BuiltinFunctionType, types.MethodDescriptorType)


def _pure_schema(fn: Any) -> frozenset[str] | None:
    """The out= argument names of `fn`'s ATen packet when every overload is free of writes and aliases
    (out= variants aside), else None (Note [Input copies])."""
    if type(fn) not in _BUILTIN_KINDS:
        return None
    if type(fn) is types.MethodDescriptorType and getattr(fn, "__objclass__", None) is not torch._C.TensorBase:
        return None
    name = getattr(fn, "__name__", "")
    if not name or name.startswith("_") or name.endswith("_"):
        return None
    try:
        packet = getattr(torch.ops.aten, name)
        overloads = [getattr(packet, o)._schema for o in packet.overloads()]
    except Exception:
        return None
    if not overloads:
        return None
    out_names: set[str] = {"out"}
    for schema in overloads:
        writes_out = [a for a in schema.arguments
                      if a.alias_info is not None and a.kwarg_only and a.alias_info.is_write]
        if any(a.alias_info is not None for a in schema.arguments if a not in writes_out):
            return None
        if writes_out:
            out_names.update(a.name for a in writes_out)
        elif any(r.alias_info is not None for r in schema.returns):
            return None
    return frozenset(out_names)


def copies_inputs(mode: Mode, target: Target, sample: Sample) -> bool:
    """Whether `execute` runs `mode` on a private copy of `sample` (Note [Input copies])."""
    if not mode.passes_inputs_through or target.is_module_class or target.code:
        return True
    fn = target.fn
    try:
        out_names = _PURE[fn]
    except KeyError:
        out_names = _PURE[fn] = _pure_schema(fn)
    except TypeError:  # unhashable
        return True
    if out_names is None:
        return True
    kwargs = sample.kwargs
    return bool(kwargs) and (any(k in out_names for k in kwargs) or bool(kwargs.get("inplace")))


def _versions(sample: Sample, leaves: list[torch.Tensor] | None = None) -> tuple[list[torch.Tensor], int] | None:
    """The input tensors and the sum of their version counters (counters only grow: the sum moves iff one
    does); None where a tensor has none (inference tensors): then copy. `leaves`: the sample's tensor leaves
    when the caller has them already."""
    if leaves is None:
        leaves = tensor_leaves(sample.tree())
    try:
        return leaves, sum([t._version for t in leaves])
    except RuntimeError:
        return None


def execute(mode: Mode, target: Target, sample: Sample, *, reseed: int | None,
            leaves: list[torch.Tensor] | None = None) -> Execution:
    """Run `mode` on a private copy of `sample` (in-place ops must not leak into the other mode's input), or on
    `sample` itself where nothing can write to it (Note [Input copies]). `leaves`: the sample's tensor leaves,
    when the caller has them (the campaign works them out once for both modes)."""
    versions = None if copies_inputs(mode, target, sample) else _versions(sample, leaves)
    run_on = sample if versions is not None else Sample(*clone_tree(sample.tree()), ctor=sample.ctor,
                                                         origin=sample.origin)
    if reseed is not None:
        torch.manual_seed(reseed)
    grad_was = torch.is_grad_enabled()
    torch._C._set_grad_enabled(False)  # torch.no_grad() without the context manager's cost
    try:
        out = mode.run(target, run_on)
    except Exception as exc:  # the target's own exception is data, not a tool failure
        return failed(mode, exc)
    finally:
        torch._C._set_grad_enabled(grad_was)
    if versions is not None and sum([t._version for t in versions[0]]) != versions[1]:
        return wrote_to_input(target)
    return Execution("ok", output=_detach(out))


def failed(mode: Mode, exc: Exception) -> Execution:
    """What an exception out of a mode's run means: not applicable (the mode does not apply, a kernel that does
    not exist in the test mode), else the target's exception."""
    if isinstance(exc, NotApplicable):
        return Execution("na", error=exc)
    if mode.name != "eager" and _UNSUPPORTED_KERNEL.search(str(exc)):
        return Execution("na", error=exc)
    if mode.compute_dtype is not None and _FLOAT_ONLY_ARGUMENT.search(str(exc)):
        return Execution("na", error=exc)
    return Execution("exc", error=exc)


def wrote_to_input(target: Target) -> Execution:
    """An uncopied run changed an input's version counter: the target writes after all (Note [Input copies])."""
    _PURE[target.fn] = None
    return Execution("na", error=NotApplicable(
        f"{target.api} wrote to its input although its schema says it does not: inputs are copied from now on"))


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
    if type(out) is torch.Tensor:  # the common case, without the tree walk
        # A plain tensor that does not require grad has no graph to cut: detach would only make a new handle on
        # the same data (Note [The hot loop] in fuzz_core/campaign.py).
        return out.detach() if out.requires_grad else out
    if isinstance(out, torch.Tensor):
        return out.detach()
    return map_tensors(out, lambda t: t.detach())


detach_output = _detach  # a mode's output cut from any autograd graph (a plain tensor that does not require grad as it is)
