"""`variant:out`, `variant:inplace`, `variant:method`: the other spellings of the same API (`variant:decomp`, the
op against its reference decomposition, lives in decomp.py)."""

from __future__ import annotations

import re
from typing import Any

import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.base import Mode, NotApplicable
from fuzz_core.target import Target
from fuzz_core.tensors import map_tensors

# Errors that mean "this spelling does not exist for this call", not "the spelling is wrong".
_UNSUPPORTED = re.compile(
    r"unexpected keyword argument 'out'|got an unexpected keyword|can't be cast to the desired output type|"
    r"doesn't match the broadcast shape|not supported for|does not support|out= |out=|"
    r"Expected out tensor|received an invalid combination of arguments|inplace", re.IGNORECASE)


def _unwrap_tensor_method(target: Target) -> Any:
    return getattr(torch, target.short_name, None)


class VariantMode(Mode):
    @property
    def variant(self) -> str:
        return self.name.split(":", 1)[1]

    def check(self, target: Target, sample: Sample) -> None:
        if target.code or target.is_module_class:
            raise NotApplicable(f"{self.name} applies to library functions, not to code or modules")
        if not sample.args or not isinstance(sample.args[0], torch.Tensor):
            raise NotApplicable(f"{self.name} needs a tensor first argument")
        if self.variant == "method" and (target.method_name is None or target.api.startswith("torch.Tensor.")):
            raise NotApplicable(f"{target.api} has no Tensor method of the same name")
        if self.variant == "inplace" and target.inplace_name is None:
            raise NotApplicable(f"{target.api} has no in-place variant Tensor.{target.short_name}_")

    def run(self, target: Target, sample: Sample) -> Any:
        self.check(target, sample)
        args, kwargs = map_tensors(sample.tree(), lambda t: t.clone())
        try:
            if self.variant == "method":
                return getattr(args[0], target.method_name)(*args[1:], **kwargs)
            if self.variant == "inplace":
                first = args[0]
                getattr(first, target.inplace_name)(*args[1:], **kwargs)
                return first
            return self._run_out(target, args, kwargs)
        except (TypeError, RuntimeError) as exc:
            if _UNSUPPORTED.search(str(exc)):
                raise NotApplicable(f"{self.name}: {str(exc).splitlines()[0][:200]}") from exc
            raise

    @staticmethod
    def _run_out(target: Target, args: tuple, kwargs: dict) -> Any:
        if "out" in kwargs:
            raise NotApplicable("the call already passes out=")
        fn = target.fn
        if target.api.startswith("torch.Tensor."):
            fn = _unwrap_tensor_method(target)
            if fn is None:
                raise NotApplicable(f"no torch.{target.short_name} function to call with out=")
        expected = fn(*args, **kwargs)
        # Fill out= buffers with a sentinel so an element the kernel forgets to write shows up.
        if isinstance(expected, torch.Tensor):
            out: Any = torch.full_like(expected, 7) if expected.dtype != torch.bool else torch.empty_like(expected)
        elif isinstance(expected, (tuple, list)) and all(isinstance(e, torch.Tensor) for e in expected):
            out = tuple(torch.full_like(e, 7) if e.dtype != torch.bool else torch.empty_like(e) for e in expected)
        else:
            raise NotApplicable("output is not a tensor or a tuple of tensors")
        result = fn(*args, **kwargs, out=out)
        return result if result is not None else out

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        name = target.short_name if target else "op"
        if self.variant == "method":
            call = f"return args[0].{name}(*args[1:], **kwargs)"
        elif self.variant == "inplace":
            call = f"first = args[0]\n    first.{name}_(*args[1:], **kwargs)\n    return first"
        else:
            call = ("expected = fn(*args, **kwargs)\n"
                    "    fill = lambda e: torch.full_like(e, 7) if e.dtype != torch.bool else torch.empty_like(e)\n"
                    "    out = fill(expected) if isinstance(expected, torch.Tensor) else tuple(fill(e) for e in expected)\n"
                    "    result = fn(*args, **kwargs, out=out)\n"
                    "    return result if result is not None else out")
        return f'''
def run_mode(fn, args, kwargs):
    args, kwargs = torch.utils._pytree.tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, (args, kwargs))
    {call}
'''


def make_variant(name: str, options: dict) -> Mode:
    if name == "variant:decomp":  # the op against its reference decomposition (fuzz_core/modes/decomp.py)
        from fuzz_core.modes.decomp import make_decomp

        return make_decomp(name, options)
    if name not in ("variant:out", "variant:inplace", "variant:method"):
        raise KeyError(name)
    # An in-place spelling writes its result into its first argument, so the output keeps that tensor's dtype
    # (x.greater_(y) stays float32 where torch.greater gives bool): a dtype difference is the contract, not a bug,
    # and the values are compared in the functional result's dtype.
    return VariantMode(name=name, options=options, compares_dtype=name != "variant:inplace")
