"""Seed inputs for nn.Module classes whose constructor or forward needs more than one plain tensor.

`nn.CosineSimilarity()(x1, x2)` and every loss take two tensors; `nn.Upsample` needs a size or a
scale factor although both default to None; `nn.CrossEntropyLoss` wants class indices as target;
`nn.Bilinear` takes two inputs of its two feature sizes. The constructor gets its required
arguments (sizes matching the inputs' last dimension), then a few optional ones that some modules
need in practice; forward gets as many tensors as it has required parameters, in a few value
domains. Each candidate is kept only when eager accepts it (Note [Inputs that run] in schema.py).
"""

from __future__ import annotations

import inspect
import itertools
from typing import Any, Callable, Iterator

import torch

from fuzz_core.inputs import Sample
from fuzz_core.target import Target

SHAPES: tuple[tuple[int, ...], ...] = ((3, 4), (2, 4, 4), (4,), (2, 4, 4, 4), (2, 4, 4, 4, 4), (4, 4, 4))
_CTOR_INTS = {"kernel_size": 3, "num_heads": 2, "num_groups": 2, "num_embeddings": 10, "stride": 1,
              "upscale_factor": 2, "downscale_factor": 2, "output_size": 2, "dim": 1, "num_layers": 1,
              "nhead": 2, "padding": 1, "blank": 0, "n_classes": 4, "cutoffs": [2], "unflattened_size": (2, 2),
              "d_model": 4, "dim_feedforward": 8, "out_features": 4, "out_channels": 4}
# Optional constructor arguments that some modules need all the same (Upsample: size or scale_factor).
# RNNs and Transformer hide their sizes behind *args or defaults far from the inputs' (4).
_EXTRA_CTORS: tuple[dict[str, Any], ...] = ({}, {"scale_factor": 2.0}, {"output_size": (2, 2)},
                                            {"batch_first": True}, {"input_size": 4, "hidden_size": 4},
                                            {"d_model": 4, "nhead": 2, "dim_feedforward": 8, "dropout": 0.0})
DOMAINS = ("normal", "unit", "classes")
_OBJECT_ARGUMENTS = frozenset({"module", "modules", "args", "device_ids", "encoder_layer", "decoder_layer"})


def _ctor_value(name: str, last_dim: int) -> Any:
    if name == "normalized_shape":
        return last_dim
    if name in _CTOR_INTS:
        return _CTOR_INTS[name]
    if name == "p":
        return 0.5
    return last_dim  # features, channels and embedding sizes match the inputs' last dimension


def required_ctor(cls: type, last_dim: int) -> dict[str, Any] | None:
    """The constructor's required arguments, or None when it takes something we cannot make."""
    try:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return {}
    kwargs: dict[str, Any] = {}
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is not inspect.Parameter.empty:
            continue
        if p.name in _OBJECT_ARGUMENTS:
            return None  # constructor arguments are literals (they are stored and rendered into repros)
        kwargs[p.name] = _ctor_value(p.name, last_dim)
    return kwargs


def forward_arity(cls: type) -> int:
    """How many tensors forward needs (its required parameters after self)."""
    try:
        params = list(inspect.signature(cls.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        return 1
    required = [p for p in params if p.default is inspect.Parameter.empty
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return max(1, len(required))


def _tensor(shape: tuple[int, ...], dtype: torch.dtype, domain: str, gen: torch.Generator) -> torch.Tensor:
    if domain == "unit":
        return torch.rand(shape, generator=gen).to(dtype)
    if domain == "classes":
        return torch.randint(0, shape[-1], shape[:-1] or (1,), generator=gen)
    return torch.randn(shape, generator=gen).to(dtype)


def _forward_args(arity: int, shape: tuple[int, ...], dtype: torch.dtype, domain: str,
                  gen: torch.Generator) -> tuple[torch.Tensor, ...]:
    first = _tensor(shape, dtype, "unit" if domain == "unit" else "normal", gen)
    rest = tuple(_tensor(shape, dtype, domain, gen) for _ in range(arity - 1))
    return (first, *rest)


def candidates(target: Target, dtype: torch.dtype, seed: int) -> Iterator[Sample]:
    arity = forward_arity(target.fn)
    for shape, extra, domain in itertools.product(SHAPES, _EXTRA_CTORS, DOMAINS if arity > 1 else ("normal",)):
        ctor = required_ctor(target.fn, shape[-1])
        if ctor is None:
            return
        gen = torch.Generator().manual_seed(seed)
        args = _forward_args(arity, shape, dtype, domain, gen)
        yield Sample(args=args, ctor={**ctor, **extra}, origin=f"module:{shape}:{domain}:{sorted(extra)}")


def module_samples(target: Target, dtype: torch.dtype, seed: int, max_samples: int,
                   runs: Callable[[Target, Sample], bool]) -> list[Sample]:
    samples: list[Sample] = []
    for sample in candidates(target, dtype, seed):
        if runs(target, sample):
            samples.append(sample)
            if len(samples) >= max_samples:
                break
    return samples
