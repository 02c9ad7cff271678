"""Turn a harness spec's `api` (or its code) into a callable target with what modes need to know."""

from __future__ import annotations

import difflib
import hashlib
import importlib
import inspect
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import torch


class TargetError(ValueError):
    """The spec names an API that does not exist or code that does not define a target."""


# Ops whose integer outputs are positions: with ties, any position of an equal value is right.
# Ops whose output is uninitialised memory: nothing to compare (DESIGN.md check 5).
UNDEFINED_OUTPUT_APIS = frozenset({"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided",
                                   "empty_permuted"})

# Decompositions whose vectors are defined up to sign (real) or phase: compare magnitudes only.
SIGN_AMBIGUOUS_APIS = frozenset({"svd", "pca_lowrank", "svd_lowrank", "eigh", "qr"})
# Eigen-decompositions of general matrices: neither order nor phase is defined.
UNORDERED_OUTPUT_APIS = frozenset({"eig", "eigvals"})

# Outputs that depend on the bit pattern of the dtype, not on the values: no precision comparison.
BIT_LEVEL_APIS = frozenset({"hash_tensor"})

INDEX_APIS = frozenset({"argmax", "argmin", "argsort", "topk", "sort", "max", "min", "kthvalue", "mode", "median",
                        "nanmedian", "msort", "cummax", "cummin", "unique", "searchsorted"})


@dataclass
class Target:
    """A callable under test plus the facts modes and oracles use."""

    api: str
    fn: Callable[..., Any]
    short_name: str
    module_path: str = ""  # e.g. "torch.nn.functional" for repro scripts
    code: str | None = None
    namespace: dict[str, Any] = field(default_factory=dict)
    opinfo: Any = None
    is_module_class: bool = False
    module_factory: Callable[[], torch.nn.Module] | None = None
    opinfo_call: tuple[str, str] | None = None  # (name, variant): call OpInfo's function variant

    @property
    def sign_ambiguous(self) -> bool:
        return self.short_name in SIGN_AMBIGUOUS_APIS

    @property
    def returns_indices(self) -> bool:
        return self.short_name.rstrip("_") in INDEX_APIS

    @property
    def method_name(self) -> str | None:
        name = self.short_name
        return name if hasattr(torch.Tensor, name) else None

    @property
    def inplace_name(self) -> str | None:
        name = self.short_name + "_"
        return name if hasattr(torch.Tensor, name) else None


def resolve_qualified(api: str) -> Any:
    """Import `a.b.c` as attribute chain from the longest importable module prefix."""
    parts = api.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            break
        return obj
    raise TargetError(f"unknown API {api!r}{_suggest(api)}")


def _suggest(api: str) -> str:
    near = near_apis(api)
    return f"; did you mean {', '.join(near)}?" if near else ""


def near_apis(api: str, n: int = 5) -> list[str]:
    """Public names close to `api` in the namespace its prefix resolves to (or torch's common ones)."""
    parts = api.split(".")
    candidates: list[str] = []
    for prefix in ("torch", "torch.nn.functional", "torch.nn", "torch.Tensor", "torch.linalg", "torch.special", "torch.fft"):
        try:
            ns = resolve_qualified_quiet(prefix)
        except Exception:
            continue
        candidates += [f"{prefix}.{n_}" for n_ in dir(ns) if not n_.startswith("_")]
    full = difflib.get_close_matches(api, candidates, n=n, cutoff=0.75)
    if full:
        return full
    tail = parts[-1]
    by_tail = {c.rsplit(".", 1)[1]: c for c in candidates}
    return [by_tail[t] for t in difflib.get_close_matches(tail, list(by_tail), n=n, cutoff=0.7)]


def resolve_qualified_quiet(api: str) -> Any:
    parts = api.split(".")
    obj: Any = importlib.import_module(parts[0])
    for attr in parts[1:]:
        obj = getattr(obj, attr)
    return obj


def api_exists(api: str) -> bool:
    try:
        resolve_qualified(api)
    except TargetError:
        return False
    return True


def build_target(api: str, code: str | None = None) -> Target:
    """A Target for a qualified name, or for code that defines `target` (run in THIS process)."""
    short = api.rsplit(".", 1)[-1]
    if code:
        # A real module in sys.modules: dynamo and pickle look functions up by their module name.
        name = "transfuzz_harness_" + hashlib.sha1(code.encode()).hexdigest()[:12]
        module = sys.modules.get(name)
        if module is None:
            module = types.ModuleType(name)
            module.__dict__["torch"] = torch
            try:
                exec(compile(code, f"<harness {name}>", "exec"), module.__dict__)  # noqa: S102 - sandboxed workers
            except Exception as exc:
                raise TargetError(f"harness code failed to load: {type(exc).__name__}: {exc}") from exc
            sys.modules[name] = module
        namespace: dict[str, Any] = module.__dict__
        fn = namespace.get("target")
        if fn is None:
            fn = resolve_qualified(api)
        if not callable(fn):
            raise TargetError("harness code's `target` is not callable")
        is_module_class = inspect.isclass(fn) and issubclass(fn, torch.nn.Module)
        return Target(api=api, fn=fn, short_name=short, code=code, namespace=namespace,
                      module_path=api.rsplit(".", 1)[0] if is_module_class else "", is_module_class=is_module_class)
    obj = resolve_qualified(api)
    module_path = api.rsplit(".", 1)[0] if "." in api else ""
    if inspect.isclass(obj) and issubclass(obj, torch.nn.Module):
        return Target(api=api, fn=obj, short_name=short, module_path=module_path, is_module_class=True)
    if not callable(obj):
        raise TargetError(f"{api!r} is not callable")
    return Target(api=api, fn=obj, short_name=short, module_path=module_path)
