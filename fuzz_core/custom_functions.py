"""`torch.autograd.Function` as an API under test: backward rules written by a user, which compiled, traced and
transformed code must run as written.

Note [Custom autograd Functions]
A custom Function's backward is the user's rule, not autodiff's: a straight-through estimator passes round()'s
gradient through unchanged, a surrogate gradient replaces the true one, a Function given the same tensor twice must
have both of its gradients summed. Tracker reports show compiled gradients that ignored the rule (autodiff's answer
instead of the user's) or that kept one of the two gradients of a tensor passed twice. In such a report the API under
test is the construct, not the op inside its forward, so the fuzz core holds a few Functions of its own, one per
feature of the construct (FUNCTIONS), written here as source text: the same text is what the fuzz core runs and what
a repro prints. No text from an issue or a model is ever run: a harness only names one of them, by the keyword
argument `function` of the target (a trigger parameter of the pattern); its inputs without the parameter cover
them all (fuzz_core/inputs/arg_rules.py).
"""

from __future__ import annotations

import sys
import types
from typing import Any

CUSTOM_FUNCTION_API = "torch.autograd.Function"
DEFAULT_FUNCTION = "straight_through"
TIED_INPUTS = "tied_inputs"  # the Function given one tensor as both of its inputs

_STRAIGHT_THROUGH = '''
class StraightThroughRound(torch.autograd.Function):
    """round() forward; the incoming gradient passed through as it is (autodiff's would be zero)."""

    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad):
        return grad
'''

_SURROGATE = '''
class SurrogateSin(torch.autograd.Function):
    """sin() forward with forward/setup_context apart; a backward of half the true derivative."""

    @staticmethod
    def forward(x):
        return torch.sin(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 0.5 * grad * torch.cos(x)
'''

_TIED_INPUTS = '''
class Bilinear(torch.autograd.Function):
    """a * b + a + b with its exact gradients; called with one tensor as both inputs, whose gradients add up."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b + a + b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * (b + 1), grad * (a + 1)
'''

_SAVED_OUTPUT = '''
class SavedExp(torch.autograd.Function):
    """exp() whose backward reads the saved output, not the input."""

    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y
'''

# name -> (class source, the call of the class on the target's input `x`)
FUNCTIONS: dict[str, tuple[str, str]] = {
    "straight_through": (_STRAIGHT_THROUGH, "StraightThroughRound.apply(x)"),
    "surrogate_backward": (_SURROGATE, "SurrogateSin.apply(x)"),
    TIED_INPUTS: (_TIED_INPUTS, "Bilinear.apply(x, x)"),
    "saved_output": (_SAVED_OUTPUT, "SavedExp.apply(x)"),
}


def functions_source() -> str:
    """Every Function and the target that calls the one its `function` argument names: what runs, and what a repro
    prints."""
    classes = "\n".join(source for source, _call in FUNCTIONS.values())
    branches = "".join(f"    if function == {name!r}:\n        return {call}\n" for name, (_s, call) in FUNCTIONS.items())
    names = ", ".join(repr(name) for name in FUNCTIONS)
    return (f"from typing import Literal\n\nimport torch\n{classes}\n\n"
            f"def custom_function(x, *, function: Literal[{names}] = {DEFAULT_FUNCTION!r}):\n"
            f"    \"\"\"The Function named `function` applied to `x`.\"\"\"\n{branches}"
            "    raise ValueError(f'no custom Function named {function!r}')\n")


_MODULE = "transfuzz_custom_functions"


def custom_function_callable() -> Any:
    """`custom_function(x, *, function=...)`, its classes in a module of their own (dynamo and pickle look functions
    up by module name), built once per process from functions_source()."""
    module = sys.modules.get(_MODULE)
    if module is None:
        import torch  # the names above are read where torch is not needed (the offline analyzer, transfer)

        module = types.ModuleType(_MODULE)
        module.__dict__["torch"] = torch
        exec(compile(functions_source(), f"<{_MODULE}>", "exec"), module.__dict__)  # noqa: S102 - our own constant text
        sys.modules[_MODULE] = module
    return module.__dict__["custom_function"]
