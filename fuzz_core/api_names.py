"""Which API names may be fuzzed: an allow-list of torch's pure tensor computations, never imported.

Note [API allow-list]
An API name comes from issue text or from an LLM, so it is untrusted. It is accepted only when it
is a key of the allow-list, a table of name -> object built once per process by reading attributes
of a few trusted torch namespaces (the names come from ``dir()`` of torch's own objects, never from
the input). The table holds pure tensor computations only:

- every function ``torch.overrides.get_testing_overrides()`` lists (torch.*, Tensor methods,
  torch.nn.functional, linalg, fft, special), and torch's native ATen functions
  (``torch._C._VariableFunctions``, which adds the factories: zeros, arange, randn ...);
- the public functions of torch.nn.functional, torch.linalg, torch.fft, torch.special,
  torch.sparse, torch.masked, torch.signal.windows and torch.nn.init, and Tensor's methods;
- the ``nn.Module`` classes of ``torch.nn`` whose ``forward`` computes tensors (containers,
  data-parallel wrappers and SyncBatchNorm are out);
- each other spelling of one of those objects in the same namespaces (``torch.einsum`` for
  ``torch.functional.einsum``), and OpInfo's ``torch.<name>`` spellings of Tensor-only methods
  (``torch.view``), which resolve to OpInfo's own op (torch's OpInfo database is imported only
  for a two-part name torch does not have: it takes seconds);
- ``torch.autograd.Function``, the construct, which names the fuzz core's own custom Functions
  (Note [Custom autograd Functions] in fuzz_core/custom_functions.py), never a class of the input.

Minus everything that does I/O, registers hooks, sets global state, compiles or parses code,
forks, or touches devices' runtimes or distributed (``EXCLUDED``, checked first so that each
refusal names its reason). A name outside the table is refused; a read-only static walk
(``inspect.getattr_static``: no ``__getattr__``, no descriptor, no lazy import runs) only finds
the words for why. Nothing here calls ``importlib`` on a name.
"""

from __future__ import annotations

import inspect
import re
import types
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MAX_API_CHARS = 200
_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")

LOADS_OR_RUNS_CODE = "denied: loads, compiles or parses code"
FILES = "denied: reads or writes files"
PROCESSES = "denied: starts processes, forks or opens connections"
SETTINGS = "denied: changes process-wide settings"
HOOKS = "denied: registers hooks"
STORAGE = "denied: reaches a tensor's storage or shared memory"
FOREIGN_MEMORY = "denied: wraps memory torch does not own (a numpy array, a buffer, a DLPack capsule)"
CALLBACKS = "denied: calls a function it is given"
DEVICE_RUNTIME = "denied: device runtime control, not an op"
NOT_OP = "denied: torch's dispatch plumbing, not an op"
NOT_PUBLIC = "not in torch's public namespace"
NOT_CALLABLE = "not a callable op or module"
NOT_ALLOWED = "not on the allow-list of pure tensor APIs"

# Canonical dotted prefixes (module paths, or objects inside torch's namespace) and why each is denied.
EXCLUDED_PREFIXES: dict[str, str] = {
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
    "torch.CompilationUnit": LOADS_OR_RUNS_CODE,
    "torch.ScriptModule": LOADS_OR_RUNS_CODE,
    "torch.ScriptFunction": LOADS_OR_RUNS_CODE,
    "torch.import_ir_module": LOADS_OR_RUNS_CODE,
    "torch.import_ir_module_from_buffer": LOADS_OR_RUNS_CODE,
    "torch.parse_ir": LOADS_OR_RUNS_CODE,
    "torch.parse_schema": LOADS_OR_RUNS_CODE,
    "torch.parse_type_comment": LOADS_OR_RUNS_CODE,
    "torch.merge_type_from_type_comment": LOADS_OR_RUNS_CODE,
    "torch.cpp": LOADS_OR_RUNS_CODE,
    "torch.onnx": FILES,
    "torch.save": FILES,
    "torch.from_file": FILES,
    "torch.PyTorchFileWriter": FILES,
    "torch.PyTorchFileReader": FILES,
    "torch.profiler": FILES,
    "torch.autograd.profiler": FILES,
    "torch.autograd.profiler_util": FILES,
    "torch.multiprocessing": PROCESSES,
    "torch.distributed": PROCESSES,
    "torch.fork": PROCESSES,
    "torch.wait": PROCESSES,
    "torch.futures": PROCESSES,
    "torch.nn.parallel": PROCESSES,
    "torch.nn.DataParallel": PROCESSES,
    "torch.nn.SyncBatchNorm": PROCESSES,
    "torch.backends": SETTINGS,
    "torch.use_deterministic_algorithms": SETTINGS,
    "torch.manual_seed": SETTINGS,
    "torch.seed": SETTINGS,
    "torch.random": SETTINGS,
    "torch.autograd.set_detect_anomaly": SETTINGS,
    "torch.autograd.detect_anomaly": SETTINGS,
    "torch.autograd.anomaly_mode": SETTINGS,
    "torch.autograd.grad_mode": SETTINGS,
    "torch.autograd.set_grad_enabled": SETTINGS,
    "torch.autograd.set_multithreading_enabled": SETTINGS,
    "torch.distributions": SETTINGS,  # Distribution.set_default_validate_args flips a class-wide switch
    "torch.sparse.check_sparse_tensor_invariants": SETTINGS,
    "torch.nn.modules.module": HOOKS,  # register_module_*_hook: global hooks on every module
    "torch.overrides": SETTINGS,
    "torch.cuda": DEVICE_RUNTIME,
    "torch.mps": DEVICE_RUNTIME,
    "torch.xpu": DEVICE_RUNTIME,
    "torch.mtia": DEVICE_RUNTIME,
    "torch.accelerator": DEVICE_RUNTIME,
}
# torch.utils is tooling (cpp_extension, data loader workers, tensorboard, benchmark, collect_env ...).
UTILS_REASON = "denied: torch.utils tooling (compiles code, starts processes or touches files)"
# Leaf names denied wherever they appear (Storage.from_file, Tensor.register_hook ...).
EXCLUDED_LEAVES: dict[str, str] = {
    "from_file": FILES, "load": LOADS_OR_RUNS_CODE, "save": FILES, "load_library": LOADS_OR_RUNS_CODE,
    "load_inline": LOADS_OR_RUNS_CODE, "frombuffer": FOREIGN_MEMORY, "from_numpy": FOREIGN_MEMORY,
    "from_dlpack": FOREIGN_MEMORY,
    "share_memory_": STORAGE, "storage": STORAGE, "untyped_storage": STORAGE, "storage_type": STORAGE,
    "is_shared": STORAGE, "set_": STORAGE, "module_load": STORAGE, "record_stream": DEVICE_RUNTIME,
    "apply_": CALLBACKS, "map_": CALLBACKS, "map2_": CALLBACKS, "as_sparse_gradcheck": CALLBACKS,
    "boolean_dispatch": NOT_OP, "assert_int_or_pair": NOT_OP, "handle_torch_function": NOT_OP,
    "has_torch_function": NOT_OP, "has_torch_function_unary": NOT_OP, "has_torch_function_variadic": NOT_OP,
}
_HOOK_RE = re.compile(r"(^|_)hooks?($|_)")
# nn.Module classes that hold or call other modules instead of computing on tensors.
_CONTAINERS = frozenset({"Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
                         "Container"})
# Trusted namespaces whose public callables are read into the table (each name from the object's dir()).
_FUNCTION_NAMESPACES = ("torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "torch.sparse",
                        "torch.masked", "torch.signal.windows", "torch.nn.init")
_ALIAS_NAMESPACES = ("torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "torch.sparse",
                     "torch.masked", "torch.signal.windows", "torch.nn.init", "torch.functional")


class ApiRejected(ValueError):
    """An API name that is not one of torch's allow-listed tensor computations."""

    def __init__(self, api: str, reason: str) -> None:
        super().__init__(f"API {api[:MAX_API_CHARS]!r} rejected: {reason}")
        self.api = api
        self.reason = reason


@dataclass(frozen=True)
class _Verdict:
    reason: str | None
    obj: Any = None
    via_opinfo: bool = False  # accepted as OpInfo's spelling; obj is OpInfo's function variant


def excluded_reason(path: str) -> str | None:
    """Why a canonical dotted name is excluded even inside an allowed namespace, or None."""
    if path == "torch.utils" or path.startswith("torch.utils."):
        return UTILS_REASON
    for prefix, reason in EXCLUDED_PREFIXES.items():
        if path == prefix or path.startswith(prefix + "."):
            return reason
    parts = path.split(".")
    leaf = parts[-1]
    if leaf in EXCLUDED_LEAVES:
        return EXCLUDED_LEAVES[leaf]
    if _HOOK_RE.search(leaf) or leaf.startswith("register_"):
        return HOOKS
    if len(parts) == 2 and leaf.startswith("set_"):
        return SETTINGS
    return None


def _namespace(path: str) -> Any:
    """A trusted namespace object by its dotted path (the path is ours, never the input's)."""
    import torch

    obj: Any = torch
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _public_callables(owner: Any) -> list[tuple[str, Any]]:
    out = []
    for name in dir(owner):
        if name.startswith("_"):
            continue
        try:
            obj = inspect.getattr_static(owner, name)
        except AttributeError:
            continue
        if isinstance(obj, (staticmethod, classmethod)):
            obj = getattr(owner, name)
        out.append((name, obj))
    return out


def _is_tensor_module(cls: Any) -> bool:
    import torch

    return (inspect.isclass(cls) and issubclass(cls, torch.nn.Module) and cls.__name__ not in _CONTAINERS
            and getattr(cls, "forward", None) is not getattr(torch.nn.Module, "forward", None))


def _defined_in_torch(obj: Any) -> bool:
    origin = getattr(obj, "__module__", None)
    if origin is None and hasattr(obj, "__objclass__"):
        origin = getattr(obj.__objclass__, "__module__", None)
    return isinstance(origin, str) and (origin == "torch" or origin.startswith("torch."))


@lru_cache(maxsize=1)
def allowed_apis() -> Mapping[str, Any]:
    """The allow-list: qualified name -> the torch object it names (built once per process)."""
    import torch
    from torch.overrides import get_testing_overrides, resolve_name

    table: dict[str, Any] = {}

    def add(name: str, obj: Any) -> None:
        if name in table or any(p.startswith("_") for p in name.split(".")) or excluded_reason(name) is not None:
            return
        if callable(obj) and not isinstance(obj, types.ModuleType):
            table[name] = obj

    for fn in get_testing_overrides():
        name = resolve_name(fn)
        if name:
            add(name, fn)
    native = torch._C._VariableFunctions
    for name in dir(native):
        if not name.startswith("_") and getattr(torch, name, None) is getattr(native, name):
            add(f"torch.{name}", getattr(torch, name))
    for path in _FUNCTION_NAMESPACES:
        for name, obj in _public_callables(_namespace(path)):
            if not inspect.isclass(obj) and _defined_in_torch(obj):
                add(f"{path}.{name}", obj)
    for name, obj in _public_callables(torch.Tensor):
        if callable(obj) and not isinstance(obj, property):
            add(f"torch.Tensor.{name}", getattr(torch.Tensor, name))
    for name in dir(torch.nn):
        obj = getattr(torch.nn, name, None)
        if not name.startswith("_") and _is_tensor_module(obj):
            add(f"torch.nn.{name}", obj)
    from fuzz_core.custom_functions import CUSTOM_FUNCTION_API, custom_function_callable

    table[CUSTOM_FUNCTION_API] = custom_function_callable()
    allowed_ids = {id(obj) for obj in table.values()}
    for path in _ALIAS_NAMESPACES:
        for name, obj in _public_callables(_namespace(path)):
            if id(obj) in allowed_ids:
                add(f"{path}.{name}", obj)
    return types.MappingProxyType(table)


@lru_cache(maxsize=1)
def _opinfo_ops() -> dict[str, Any]:
    """`torch.<OpInfo name>` -> its op, for the default variant of each entry (imports OpInfo once)."""
    from torch.testing._internal.common_methods_invocations import op_db

    ops: dict[str, Any] = {}
    for op in op_db:
        if op.name.startswith("_") or op.variant_test_name or "." in op.name:
            continue
        ops.setdefault("torch." + op.name, op.op)
    return ops


_ABSENT = object()


def _why_not(api: str) -> tuple[str, bool]:
    """Words for a name outside the table, by a read-only static walk; (reason, absent)."""
    import torch

    parts = api.split(".")
    obj: Any = torch
    for depth, part in enumerate(parts[1:], start=2):
        path = ".".join(parts[:depth])
        if not (isinstance(obj, types.ModuleType) or inspect.isclass(obj)):
            return f"{NOT_PUBLIC}: {'.'.join(parts[:depth - 1])} is neither a module nor a class", False
        try:
            obj = inspect.getattr_static(obj, part)
        except AttributeError:
            return f"{NOT_PUBLIC}: torch has no {path}", True
        if isinstance(obj, types.ModuleType):
            if obj.__name__ != path:
                return f"re-exported module {obj.__name__}", False
            continue
        origin = getattr(obj, "__module__", None)
        if isinstance(origin, str) and not (origin == "torch" or origin.startswith("torch.")):
            return f"re-exported object from {origin}", False
    if isinstance(obj, types.ModuleType) or not callable(obj) and not isinstance(obj, (staticmethod, classmethod)):
        return f"{NOT_CALLABLE}: {api} is a {type(obj).__name__}", not isinstance(obj, types.ModuleType)
    return f"{NOT_ALLOWED}: {api} is not a pure tensor computation torch lists (Note [API allow-list])", False


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
    excluded = excluded_reason(api)
    if excluded is not None:
        return _Verdict(excluded)
    table = allowed_apis()
    if api in table:
        return _Verdict(None, table[api])
    reason, absent = _why_not(api)
    if absent and len(parts) == 2:
        op = _opinfo_ops().get(api)
        if op is not None:
            return _Verdict(None, op, via_opinfo=True)
    return _Verdict(reason)


def rejection_reason(api: object) -> str | None:
    """Why `api` may not be fuzzed, or None when the allow-list holds it (Note [API allow-list])."""
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
    """The torch object `api` names, taken from the allow-list (ApiRejected otherwise)."""
    verdict = _verdict(api)
    if verdict.reason is not None:
        raise ApiRejected(str(api), verdict.reason)
    return verdict.obj
