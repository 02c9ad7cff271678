"""Turn a harness spec's `api` (or its code) into a callable target with what modes need to know."""

from __future__ import annotations

import difflib
import hashlib
import inspect
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from fuzz_core.api_names import NOT_PUBLIC, ApiRejected, is_opinfo_spelling, is_public_api, resolve_public_api


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
# Outputs that report the memory layout or address itself: a layout mode changes them by definition, and an
# address differs between any two runs.
LAYOUT_QUERY_APIS = frozenset({"is_contiguous", "stride", "storage_offset", "is_non_overlapping_and_dense",
                               "data_ptr", "untyped_storage", "storage", "is_set_to", "_is_view", "is_view"})
ADDRESS_APIS = frozenset({"data_ptr", "untyped_storage", "storage", "is_set_to"})

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
    """The torch object `api` names, reached only by the checked walk of fuzz_core.api_names."""
    try:
        obj = resolve_public_api(api)
    except ApiRejected as exc:
        hint = _suggest(api) if exc.reason.startswith(NOT_PUBLIC) else ""
        raise TargetError(f"{exc}{hint}") from None
    if is_opinfo_spelling(api):
        raise TargetError(f"{api!r} is OpInfo's name for an op torch does not export; only OpInfo inputs can call it")
    return obj


def _suggest(api: str) -> str:
    near = near_apis(api)
    return f"; did you mean {', '.join(near)}?" if near else ""


_SUGGESTION_NAMESPACES = ("torch", "torch.nn.functional", "torch.nn", "torch.Tensor", "torch.linalg", "torch.special",
                          "torch.fft")


def near_apis(api: str, n: int = 5) -> list[str]:
    """Accepted public names close to `api` in torch's common namespaces."""
    parts = str(api).split(".")
    candidates: list[str] = []
    for prefix in _SUGGESTION_NAMESPACES:
        ns: Any = torch
        for attr in prefix.split(".")[1:]:
            ns = getattr(ns, attr)
        candidates += [f"{prefix}.{n_}" for n_ in dir(ns) if not n_.startswith("_")]
    full = [c for c in difflib.get_close_matches(str(api), candidates, n=3 * n, cutoff=0.75) if is_public_api(c)]
    if full:
        return full[:n]
    tail = parts[-1]
    by_tail = {c.rsplit(".", 1)[1]: c for c in candidates}
    near = [by_tail[t] for t in difflib.get_close_matches(tail, list(by_tail), n=3 * n, cutoff=0.7)]
    return [c for c in near if is_public_api(c)][:n]


def api_exists(api: str) -> bool:
    """Whether `api` is an accepted public torch callable (see fuzz_core.api_names)."""
    return is_public_api(api)


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
