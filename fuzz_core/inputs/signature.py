"""Seed inputs from a function's signature or docstring, and constructor args + input shapes for nn modules."""

from __future__ import annotations

import inspect
import re
from typing import Any

import torch

from fuzz_core.inputs import NoInputs, Sample
from fuzz_core.modes.base import bound_callable
from fuzz_core.target import Target

_TENSOR_NAMES = re.compile(r"^(input|x|y|self|other|tensor|tensors|mat\d?|vec\d?|weight|bias|a|b|A|B|target|"
                           r"input\d|x\d|query|key|value|exponent|end|batch\d|elements|test_elements)$")
_SHAPES: tuple[tuple[int, ...], ...] = ((4,), (3, 4), (2, 4, 4), (2, 4, 4, 4), (2, 4, 4, 4, 4), (4, 4))
_CTOR_INTS = {"kernel_size": 3, "num_heads": 2, "num_groups": 2, "num_embeddings": 10, "stride": 1,
              "upscale_factor": 2, "downscale_factor": 2, "output_size": 2, "dim": 1}


def _doc_params(fn: Any) -> list[tuple[str, bool]]:
    """(name, required) from a builtin's docstring first line such as `relu6(input, inplace=False) -> Tensor`."""
    doc = inspect.getdoc(fn) or ""
    match = re.search(r"\w+\(([^)]*)\)", doc)
    if not match:
        return []
    params = []
    for raw in match.group(1).split(","):
        raw = raw.strip()
        if not raw or raw in ("*", "/") or raw.startswith("*"):
            continue
        name = raw.split("=")[0].split(":")[0].strip()
        params.append((name, "=" not in raw))
    return params


def _params(fn: Any) -> list[tuple[str, bool]]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return _doc_params(fn)
    out = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        out.append((p.name, p.default is inspect.Parameter.empty))
    return out


def _tensor(shape: tuple[int, ...], dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    return torch.randint(-5, 6, shape, generator=gen).to(dtype)


def _runs(target: Target, sample: Sample) -> bool:
    try:
        bound_callable(target, sample)(*sample.args, **sample.kwargs)
    except Exception:
        return False
    return True


def tensor_only_calls(target: Target, dtype: torch.dtype, seed: int) -> list[Sample]:
    """Candidate calls from the signature's required parameters over a few shapes (not yet run)."""
    params = _params(target.fn)
    required = [name for name, req in params if req]
    if not required and params:
        required = [params[0][0]]
    tensor_params = [n for n in required if _TENSOR_NAMES.match(n)] or required[:1]
    calls: list[Sample] = []
    gen = torch.Generator().manual_seed(seed)
    for shape in _SHAPES:
        args = []
        for name in required:
            if name in tensor_params:
                args.append(_tensor(shape, dtype, gen))
            elif name == "dim":
                args.append(-1)
            else:
                args.append(1)
        calls.append(Sample(args=tuple(args), origin=f"signature:{shape}"))
    return calls


def _function_samples(target: Target, dtype: torch.dtype, seed: int, max_samples: int) -> list[Sample]:
    samples: list[Sample] = []
    for sample in tensor_only_calls(target, dtype, seed):
        if _runs(target, sample):
            samples.append(sample)
        if len(samples) >= max_samples:
            break
    return samples


def _ctor_kwargs(cls: type) -> dict[str, Any] | None:
    try:
        sig = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return {}
    kwargs: dict[str, Any] = {}
    for p in list(sig.parameters.values())[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is not inspect.Parameter.empty:
            continue
        if p.name == "normalized_shape":
            kwargs[p.name] = 4
        elif p.name in _CTOR_INTS:
            kwargs[p.name] = _CTOR_INTS[p.name]
        elif p.name in ("p",):
            kwargs[p.name] = 0.5
        else:
            kwargs[p.name] = 4  # features/channels/embedding sizes: match the inputs' dim-1 of size 4
    return kwargs


def _module_samples(target: Target, dtype: torch.dtype, seed: int, max_samples: int) -> list[Sample]:
    ctor = _ctor_kwargs(target.fn)
    gen = torch.Generator().manual_seed(seed)
    samples: list[Sample] = []
    is_embedding = "Embedding" in target.short_name
    for shape in _SHAPES:
        if is_embedding:
            x = torch.randint(0, 10, shape, generator=gen)
        else:
            x = _tensor(shape, dtype, gen)
        sample = Sample(args=(x,), ctor=ctor, origin=f"module:{shape}")
        if _runs(target, sample):
            samples.append(sample)
        if len(samples) >= max_samples:
            break
    return samples


def signature_samples(target: Target, dtype: torch.dtype, seed: int, max_samples: int) -> list[Sample]:
    """Inputs that the target accepts in eager mode, tried over a few small shapes."""
    if target.is_module_class:
        samples = _module_samples(target, dtype, seed, max_samples)
    else:
        samples = _function_samples(target, dtype, seed, max_samples)
    if not samples:
        raise NoInputs(f"could not build an input that {target.api} accepts from its signature")
    return samples
