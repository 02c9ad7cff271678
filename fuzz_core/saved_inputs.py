"""Save a failing input as one safetensors file (tensors) whose metadata holds the call as JSON; load it back.

Why not torch.save: loading a pickle runs code (weights_only=False ran os.system in a
crafted file), and a repro is something a maintainer runs. safetensors holds raw tensor
bytes only; everything else in the call (the args/kwargs tree, Python scalars, dtypes) is
JSON with tagged nodes, decoded by `decode_tree` below. The repro template embeds
`load_inputs` and `decode_tree` as they are written here (inspect.getsource), so what the
fuzz core saves and what a repro loads cannot drift apart.

A non-contiguous tensor keeps its memory layout: the whole strided span of its storage is
saved flat with its shape and stride, and rebuilt with as_strided (so the gaps a
strided view skips hold the same bytes). Dtypes safetensors has no code for (complex128,
complex32, ...) are saved as their bytes. Two arguments that are the same tensor object
load as one tensor again.
"""

from __future__ import annotations

import json
import math
from typing import Any

import torch

from fuzz_core.inputs import Sample

INPUTS_FORMAT = "repro-inputs/1"
INPUTS_SUFFIX = ".safetensors"

# Dtypes safetensors stores natively (others are saved as uint8 bytes and viewed back).
_NATIVE = frozenset({torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
                     torch.int16, torch.int8, torch.uint8, torch.bool, torch.complex64})


class UnsavableInput(TypeError):
    """The input holds something that is neither a strided tensor nor a literal (the repro cannot load it)."""


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


class _Encoder:
    def __init__(self) -> None:
        self.tensors: dict[str, torch.Tensor] = {}
        self._nodes: dict[int, dict[str, Any]] = {}

    def tensor(self, t: torch.Tensor) -> dict[str, Any]:
        if t.layout != torch.strided or t.is_quantized or t.is_nested:
            raise UnsavableInput(f"a {t.layout} tensor cannot be saved for a repro")
        if id(t) in self._nodes:
            return dict(self._nodes[id(t)])
        node: dict[str, Any] = {"dtype": _dtype_name(t.dtype), "shape": list(t.shape)}
        if t.requires_grad:
            node["requires_grad"] = True
        value = t.detach().cpu().resolve_conj().resolve_neg()
        if value.is_contiguous() or value.numel() == 0:
            flat = value.reshape(-1).clone()
        else:
            span = 1 + sum((n - 1) * s for n, s in zip(value.shape, value.stride()))
            flat = value.as_strided((span,), (1,), value.storage_offset()).clone()
            node["stride"] = list(value.stride())
        if flat.dtype not in _NATIVE:
            flat = flat.view(torch.uint8)
        key = str(len(self.tensors))
        self.tensors[key] = flat
        node["tensor"] = key
        self._nodes[id(t)] = node
        return dict(node)

    def value(self, value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return self.tensor(value)
        if value is None or isinstance(value, (bool, int, str)):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else {"float": repr(value)}
        if isinstance(value, complex):
            return {"complex": [repr(value.real), repr(value.imag)]}
        if isinstance(value, torch.dtype):
            return {"dtype": _dtype_name(value)}
        if isinstance(value, torch.Size):
            return {"size": list(value)}
        if isinstance(value, torch.device):
            return {"device": str(value)}
        if isinstance(value, torch.memory_format):
            return {"memory_format": str(value).removeprefix("torch.")}
        if isinstance(value, torch.layout):
            return {"layout": str(value).removeprefix("torch.")}
        if isinstance(value, slice):
            return {"slice": [self.value(value.start), self.value(value.stop), self.value(value.step)]}
        if value is Ellipsis:
            return {"ellipsis": True}
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return {"tuple": [self.value(v) for v in value]}
        if isinstance(value, list):
            return {"list": [self.value(v) for v in value]}
        if isinstance(value, dict):
            return {"dict": [[self.value(k), self.value(v)] for k, v in value.items()]}
        raise UnsavableInput(f"a {type(value).__name__} cannot be saved for a repro")


def save_inputs(sample: Sample, path: str) -> None:
    """Write ``sample`` (args, kwargs, constructor kwargs) to ``path`` as safetensors + JSON metadata."""
    from safetensors.torch import save_file

    encoder = _Encoder()
    tree = {"args": encoder.value(tuple(sample.args)), "kwargs": encoder.value(dict(sample.kwargs)),
            "ctor": encoder.value(sample.ctor)}
    save_file(encoder.tensors, path, metadata={"format": INPUTS_FORMAT, "tree": json.dumps(tree, allow_nan=False)})


def safetensors_metadata(data: bytes) -> dict[str, str]:
    """The `__metadata__` of a safetensors file held in memory (its 8-byte length, then a JSON header)."""
    if len(data) < 8:
        raise ValueError("not a safetensors file: shorter than its header length")
    length = int.from_bytes(data[:8], "little")
    if length > len(data) - 8:
        raise ValueError("not a safetensors file: its header is longer than the file")
    header = json.loads(data[8:8 + length])
    metadata = header.get("__metadata__") if isinstance(header, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def load_inputs_file(path: str, root: str | None = None) -> dict[str, Any]:
    """load_inputs for a file in a worker's folder, read by the parent: a regular file inside `root`
    (default: its worker's folder), opened without following links and size-capped (fuzz_core/safe_files.py),
    then decoded from memory; UnsafeFile or ValueError otherwise."""
    from safetensors.torch import load

    from fuzz_core.safe_files import read_regular

    data = read_regular(path, root)
    metadata = safetensors_metadata(data)
    if metadata.get("format") != INPUTS_FORMAT:
        raise ValueError(f"{path} is not an inputs file of format {INPUTS_FORMAT}")
    tensors = load(data)
    tree = json.loads(metadata["tree"])
    return {part: decode_tree(tree[part], tensors) for part in ("args", "kwargs", "ctor")}


# --- Everything below is copied verbatim into repro scripts: plain torch, json and safetensors only.

def decode_tree(node, tensors):
    """Rebuild a value from the JSON tree; tensors by key; names only from torch's own enumerations."""
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list) or not isinstance(node, dict) or len(node) == 0:
        raise ValueError(f"not an inputs node: {node!r:.80}")
    named = {}
    for kind in (torch.dtype, torch.memory_format, torch.layout):
        named[kind] = {str(v).split(".")[-1]: v for v in vars(torch).values() if isinstance(v, kind)}
    if "tensor" in node:
        flat = tensors[node["tensor"]]
        dtype = named[torch.dtype][node["dtype"]]
        if flat.dtype != dtype:
            flat = flat.view(dtype)
        shape = [int(n) for n in node["shape"]]
        out = flat.as_strided(shape, [int(s) for s in node["stride"]]) if "stride" in node else flat.reshape(shape)
        return out.requires_grad_(True) if node.get("requires_grad") else out
    (kind, body), = node.items()
    if kind == "float":
        return float(body)
    if kind == "complex":
        return complex(float(body[0]), float(body[1]))
    if kind in ("dtype", "memory_format", "layout"):
        return named[{"dtype": torch.dtype, "memory_format": torch.memory_format, "layout": torch.layout}[kind]][body]
    if kind == "size":
        return torch.Size([int(n) for n in body])
    if kind == "device":
        return torch.device(str(body))
    if kind == "slice":
        return slice(*(decode_tree(v, tensors) for v in body))
    if kind == "ellipsis":
        return Ellipsis
    if kind == "tuple":
        return tuple(decode_tree(v, tensors) for v in body)
    if kind == "list":
        return [decode_tree(v, tensors) for v in body]
    if kind == "dict":
        return {decode_tree(k, tensors): decode_tree(v, tensors) for k, v in body}
    raise ValueError(f"unknown inputs node {kind!r:.40}")


def load_inputs(path):
    """{"args", "kwargs", "ctor"} from a file written by save_inputs; safetensors never runs code."""
    from safetensors import safe_open

    with safe_open(path, framework="pt") as handle:
        metadata = handle.metadata() or {}
        if metadata.get("format") != INPUTS_FORMAT:
            raise ValueError(f"{path} is not an inputs file of format {INPUTS_FORMAT}")
        tensors = {key: handle.get_tensor(key) for key in handle.keys()}
    tree = json.loads(metadata["tree"])
    return {part: decode_tree(tree[part], tensors) for part in ("args", "kwargs", "ctor")}
