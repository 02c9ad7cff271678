"""Which API names may be fuzzed: torch's public callables, checked as data, never imported.

An API name comes from issue text or from an LLM, so it is untrusted. It is accepted only when an
attribute walk from the ``torch`` module, through torch's own public submodules and classes, reaches
a callable that torch defines, and nothing on the way loads files, runs code, starts processes,
opens connections or changes process-wide settings. Nothing here calls ``importlib`` on the name:
the walk only reads attributes of objects torch has already made. Every rejection names its reason.

OpInfo spells a few ops as ``torch.<name>`` although ``torch.<name>`` is a dtype or a Tensor-only
method (``torch.bfloat16``, ``torch.view``); those names are accepted when PyTorch's OpInfo database
lists them, and resolve to that entry's op.
"""

from __future__ import annotations

import inspect
import re
import types
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MAX_API_CHARS = 200
_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")

LOADS_OR_RUNS_CODE = "denied: loads or runs code"
FILES = "denied: reads or writes files"
PROCESSES = "denied: starts processes or opens connections"
SETTINGS = "denied: changes process-wide settings"
DEVICE_RUNTIME = "denied: device runtime control, not an op"
NOT_PUBLIC = "not in torch's public namespace"
NOT_CALLABLE = "not a callable op or module"

# Canonical dotted prefixes (module paths, or objects inside torch's namespace) and why each is denied.
DENIED_PREFIXES: dict[str, str] = {
    "torch.hub": LOADS_OR_RUNS_CODE,
    "torch.load": LOADS_OR_RUNS_CODE,
    "torch.serialization": LOADS_OR_RUNS_CODE,
    "torch.package": LOADS_OR_RUNS_CODE,
    "torch.jit": LOADS_OR_RUNS_CODE,
    "torch.library": LOADS_OR_RUNS_CODE,
    "torch.ops": LOADS_OR_RUNS_CODE,
    "torch.classes": LOADS_OR_RUNS_CODE,
    "torch.compile": LOADS_OR_RUNS_CODE,
    "torch.compiler": LOADS_OR_RUNS_CODE,
    "torch.export": LOADS_OR_RUNS_CODE,
    "torch.fx": LOADS_OR_RUNS_CODE,
    "torch.onnx": FILES,
    "torch.save": FILES,
    "torch.from_file": FILES,
    "torch.profiler": FILES,
    "torch.autograd.profiler": FILES,
    "torch.autograd.profiler_util": FILES,
    "torch.multiprocessing": PROCESSES,
    "torch.distributed": PROCESSES,
    "torch.backends": SETTINGS,
    "torch.use_deterministic_algorithms": SETTINGS,
    "torch.cuda": DEVICE_RUNTIME,
    "torch.mps": DEVICE_RUNTIME,
    "torch.xpu": DEVICE_RUNTIME,
    "torch.mtia": DEVICE_RUNTIME,
    "torch.accelerator": DEVICE_RUNTIME,
}
# torch.utils is tooling (cpp_extension, data loader workers, tensorboard, benchmark, collect_env ...):
# only these parts of it are ops.
UTILS_ALLOWED = ("torch.utils.checkpoint", "torch.utils.dlpack")
UTILS_REASON = "denied: torch.utils tooling (compiles code, starts processes or touches files)"
# Leaf names that read or write files or load libraries wherever they appear (Storage.from_file ...).
DENIED_LEAVES: dict[str, str] = {
    "from_file": FILES, "load": LOADS_OR_RUNS_CODE, "save": FILES, "load_library": LOADS_OR_RUNS_CODE,
    "load_inline": LOADS_OR_RUNS_CODE, "share_memory_": FILES,
}


class ApiRejected(ValueError):
    """An API name that is not one of torch's public, harmless callables."""

    def __init__(self, api: str, reason: str) -> None:
        super().__init__(f"API {api[:MAX_API_CHARS]!r} rejected: {reason}")
        self.api = api
        self.reason = reason


@dataclass(frozen=True)
class _Verdict:
    reason: str | None
    obj: Any = None
    absent: bool = False  # the walk found nothing callable there (OpInfo may still name it)
    via_opinfo: bool = False  # accepted as OpInfo's spelling; obj is OpInfo's function variant


def _denied_by_path(path: str) -> str | None:
    if path.startswith("torch.utils.") or path == "torch.utils":
        if not any(path == ok or path.startswith(ok + ".") for ok in UTILS_ALLOWED):
            return UTILS_REASON
    for prefix, reason in DENIED_PREFIXES.items():
        if path == prefix or path.startswith(prefix + "."):
            return reason
    parts = path.split(".")
    if parts[-1] in DENIED_LEAVES:
        return DENIED_LEAVES[parts[-1]]
    if len(parts) == 2 and parts[1].startswith("set_"):
        return SETTINGS
    return None


def _origin(obj: Any) -> str | None:
    """The module that defines `obj` (a method descriptor's class module for C methods)."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    origin = getattr(obj, "__module__", None)
    if origin is None and hasattr(obj, "__objclass__"):
        origin = getattr(obj.__objclass__, "__module__", None)
    return origin if isinstance(origin, str) else None


def _is_torch_module_name(name: str) -> bool:
    return name == "torch" or name.startswith("torch.")


def _walk(api: str) -> _Verdict:
    import torch

    parts = api.split(".")
    obj: Any = torch
    for depth, part in enumerate(parts[1:], start=2):
        path = ".".join(parts[:depth])
        if not (isinstance(obj, types.ModuleType) or inspect.isclass(obj)):
            return _Verdict(f"{NOT_PUBLIC}: {'.'.join(parts[:depth - 1])} is neither a module nor a class")
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - a lazy attribute that fails to build is simply absent
            return _Verdict(f"{NOT_PUBLIC}: torch has no {path}", absent=True)
        if isinstance(obj, types.ModuleType):
            if obj.__name__ != path:
                return _Verdict(f"re-exported module {obj.__name__}")
        else:
            origin = _origin(obj)
            if origin is not None and not _is_torch_module_name(origin):
                return _Verdict(f"re-exported object from {origin}")
        denied = _denied_by_path(_origin(obj) or "") if not isinstance(obj, types.ModuleType) else None
        if denied is not None and not inspect.isclass(obj):
            return _Verdict(f"{denied} (defined in {_origin(obj)})")
    if isinstance(obj, types.ModuleType) or not callable(obj):
        return _Verdict(f"{NOT_CALLABLE}: {api} is a {type(obj).__name__}",
                        absent=not isinstance(obj, types.ModuleType))
    if _origin(obj) is None:
        return _Verdict(f"{NOT_PUBLIC}: cannot tell where {api} is defined")
    return _Verdict(None, obj)


@lru_cache(maxsize=1)
def _opinfo_ops() -> dict[str, Any]:
    """`torch.<OpInfo name>` -> its op, for the default variant of each entry (imports OpInfo once)."""
    from torch.testing._internal.common_methods_invocations import op_db

    ops: dict[str, Any] = {}
    for op in op_db:
        if op.name.startswith("_") or op.variant_test_name:
            continue
        ops.setdefault("torch." + op.name, op.op)
    return ops


def _verdict(api: object) -> _Verdict:
    if not isinstance(api, str):
        return _Verdict(f"not a qualified name: a {type(api).__name__}")
    return _checked(api)


@lru_cache(maxsize=8192)
def _checked(api: str) -> _Verdict:
    if not api:
        return _Verdict("not a qualified name: empty")
    if len(api) > MAX_API_CHARS:
        return _Verdict(f"not a qualified name: longer than {MAX_API_CHARS} characters")
    if not _NAME_RE.fullmatch(api):
        return _Verdict(f"not a qualified name: {api!r}")
    parts = api.split(".")
    if parts[0] != "torch":
        return _Verdict(f"{NOT_PUBLIC}: {parts[0]} is not torch")
    private = next((p for p in parts if p.startswith("_")), None)
    if private is not None:
        return _Verdict(f"{NOT_PUBLIC}: private or dunder segment {private!r}")
    denied = _denied_by_path(api)
    if denied is not None:
        return _Verdict(denied)
    walked = _walk(api)
    if walked.absent and len(parts) == 2:
        op = _opinfo_ops().get(api)
        if op is not None:
            return _Verdict(None, op, via_opinfo=True)
    return walked


def rejection_reason(api: object) -> str | None:
    """Why `api` may not be fuzzed, or None when it is one of torch's public callables."""
    return _verdict(api).reason


def is_public_api(api: object) -> bool:
    return _verdict(api).reason is None


def check_api(api: str) -> str:
    """`api` unchanged when accepted; otherwise ApiRejected with the reason."""
    reason = _verdict(api).reason
    if reason is not None:
        raise ApiRejected(str(api), reason)
    return api


def is_code_label(api: object) -> bool:
    """A name outside torch that a trusted in-process harness with its own code uses as its label.

    Such a label is never resolved: the code defines ``target``. Anything spelled ``torch.…`` must
    pass the full check, so a label cannot pose as a torch API.
    """
    return isinstance(api, str) and len(api) <= MAX_API_CHARS and bool(_NAME_RE.fullmatch(api)) \
        and api.split(".")[0] != "torch" and not any(p.startswith("_") for p in api.split("."))


def is_opinfo_spelling(api: str) -> bool:
    """Accepted only because OpInfo lists it (``torch.view``): call it through OpInfo's own op."""
    verdict = _verdict(api)
    return verdict.reason is None and verdict.via_opinfo


def resolve_public_api(api: str) -> Any:
    """The torch object `api` names, reached by the checked walk (ApiRejected otherwise)."""
    verdict = _verdict(api)
    if verdict.reason is not None:
        raise ApiRejected(str(api), verdict.reason)
    return verdict.obj
