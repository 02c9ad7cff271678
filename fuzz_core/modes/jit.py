"""`jit.trace` and `jit.script`: TorchScript versions of the target, cached per input structure."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.base import Mode, NotApplicable, bound_callable
from fuzz_core.target import Target
from fuzz_core.tensors import split_tensors, structure_sig, tensor_leaves

_TRACE_CACHE: dict[tuple[Any, ...], Any] = {}
_FLAT = "flat tensors"  # marks a key built from the plain tensor arguments alone (no structure_sig)
_SCRIPT_CACHE: dict[str, Any] = {}
_SOURCE_DIR: Path | None = None

_SPLIT_HELPER = '''
from torch.utils import _pytree as pytree

def _split(args, kwargs):
    leaves, spec = pytree.tree_flatten((args, kwargs))
    pos = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
    def rebuild(tensors):
        new = list(leaves)
        for p, t in zip(pos, tensors):
            new[p] = t
        return pytree.tree_unflatten(new, spec)
    return [leaves[i] for i in pos], rebuild
'''


class JitTraceMode(Mode):
    dispatch_observable = False
    passes_inputs_through = True  # Note [Input copies] in fuzz_core/execution.py

    def run(self, target: Target, sample: Sample) -> Any:
        fn = target.fn if not target.is_module_class else bound_callable(target, sample)
        args = sample.args
        if not sample.kwargs and all([type(a) is torch.Tensor for a in args]):
            # Plain tensors as the only arguments (the common call): the key is their dtypes and shapes, and they
            # are the traced function's inputs as they stand (Note [The hot loop] in fuzz_core/campaign.py).
            key: tuple[Any, ...] = (target.api, id(fn), _FLAT, *[(a.dtype, a.shape) for a in args])
            traced = _TRACE_CACHE.get(key)
            if traced is not None:
                return traced(*args)
        else:
            # A tuple key (the structure's dtypes, shapes and other values): Note [The hot loop].
            key = (target.api, id(fn), structure_sig(sample.tree()))
            traced = _TRACE_CACHE.get(key)
            if traced is not None:
                return traced(*tensor_leaves(sample.tree()))  # the order split_tensors gives
        tree = sample.tree()
        tensors, rebuild = split_tensors(tree)
        if not tensors:
            raise NotApplicable("jit.trace needs at least one tensor input")

        def flat(*ts: torch.Tensor) -> Any:
            args, kwargs = rebuild(list(ts))
            return fn(*args, **kwargs)

        rng_state = torch.random.get_rng_state()  # tracing runs the op once; random ops must not see it
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                traced = torch.jit.trace(flat, tuple(tensors), check_trace=False)
            torch.random.set_rng_state(rng_state)
        except Exception as exc:  # tracing limits (non-tensor outputs, in-place on inputs) are not bugs
            raise NotApplicable(f"jit.trace cannot trace this call: {type(exc).__name__}: {str(exc)[:200]}") from exc
        _TRACE_CACHE[key] = traced
        return traced(*tensors)

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        return _SPLIT_HELPER + '''
def run_mode(fn, args, kwargs):
    import warnings
    tensors, rebuild = _split(args, kwargs)
    def flat(*ts):
        a, k = rebuild(list(ts))
        return fn(*a, **k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(flat, tuple(tensors), check_trace=False)
    return traced(*tensors)
'''


def _literal(value: Any) -> str:
    if value is None or isinstance(value, (bool, int, float, str)):
        text = repr(value)
        if text in ("inf", "-inf", "nan"):
            return f"float('{text}')"
        return text
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float)) for v in value):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    raise NotApplicable(f"jit.script cannot express argument {type(value).__name__} as a literal")


def _source_dir() -> Path:
    global _SOURCE_DIR
    if _SOURCE_DIR is None:
        _SOURCE_DIR = Path(tempfile.mkdtemp(prefix="tf_jit_"))
    return _SOURCE_DIR


def _import_source(source: str) -> Any:
    """TorchScript reads function source with inspect, so generated code must live in a real file."""
    name = "tf_script_" + hashlib.sha1(source.encode()).hexdigest()[:12]
    path = _source_dir() / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def script_source(target: Target, sample: Sample) -> tuple[str, int]:
    """Source of a scriptable wrapper taking the top-level tensor args; number of tensor params."""
    params: list[str] = []
    call_args: list[str] = []
    for value in sample.args:
        if isinstance(value, torch.Tensor):
            params.append(f"t{len(params)}: torch.Tensor")
            call_args.append(f"t{len(params) - 1}")
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor) for v in value):
            params.append(f"t{len(params)}: List[torch.Tensor]")
            call_args.append(f"t{len(params) - 1}")
        else:
            call_args.append(_literal(value))
    for key, value in sample.kwargs.items():
        if isinstance(value, torch.Tensor):
            params.append(f"t{len(params)}: torch.Tensor")
            call_args.append(f"{key}=t{len(params) - 1}")
        else:
            call_args.append(f"{key}={_literal(value)}")
    api = target.api
    if api.startswith("torch.Tensor."):
        first, rest = call_args[0], call_args[1:]
        call = f"{first}.{target.short_name}({', '.join(rest)})"
    else:
        call = f"{api}({', '.join(call_args)})"
    source = (
        "import torch\nfrom typing import List\n\n\n"
        f"def scripted_target({', '.join(params)}):\n    return {call}\n"
    )
    return source, len(params)


class JitScriptMode(Mode):
    dispatch_observable = False
    passes_inputs_through = True  # Note [Input copies] in fuzz_core/execution.py

    def check(self, target: Target, sample: Sample) -> None:
        if target.code and "def target" not in target.code:
            raise NotApplicable("jit.script needs a `target` function in the harness code")

    def run(self, target: Target, sample: Sample) -> Any:
        if target.is_module_class:
            module = bound_callable(target, sample)
            key = f"module|{id(module)}"
            scripted = _SCRIPT_CACHE.get(key)
            if scripted is None:
                scripted = self._script(module)
                _SCRIPT_CACHE[key] = scripted
            return scripted(*sample.args, **sample.kwargs)
        if target.code:
            key = f"code|{hashlib.sha1(target.code.encode()).hexdigest()}"
            scripted = _SCRIPT_CACHE.get(key)
            if scripted is None:
                module = _import_source("import torch\n" + target.code)
                scripted = self._script(module.target)
                _SCRIPT_CACHE[key] = scripted
            return scripted(*sample.args, **sample.kwargs)
        source, _ = script_source(target, sample)
        scripted = _SCRIPT_CACHE.get(source)
        if scripted is None:
            scripted = self._script(_import_source(source).scripted_target)
            _SCRIPT_CACHE[source] = scripted
        tensors = [v for v in sample.args if isinstance(v, torch.Tensor) or (
            isinstance(v, (list, tuple)) and v and all(isinstance(x, torch.Tensor) for x in v))]
        tensors += [v for v in sample.kwargs.values() if isinstance(v, torch.Tensor)]
        return scripted(*[list(t) if isinstance(t, tuple) else t for t in tensors])

    @staticmethod
    def _script(obj: Any) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return torch.jit.script(obj)
        except Exception as exc:
            raise NotApplicable(f"not scriptable: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}") from exc

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        if target is None or sample is None or target.code or target.is_module_class:
            return '''
def run_mode(fn, args, kwargs):
    scripted = torch.jit.script(fn)
    return scripted(*args, **kwargs)
'''
        source, _ = script_source(target, sample)
        body = source.split("\n\n\n", 1)[1]
        return "from typing import List\n\n" + body + '''

def run_mode(fn, args, kwargs):
    scripted = torch.jit.script(scripted_target)
    tensors = [v for v in args if isinstance(v, torch.Tensor) or (
        isinstance(v, (list, tuple)) and v and all(isinstance(x, torch.Tensor) for x in v))]
    tensors += [v for v in kwargs.values() if isinstance(v, torch.Tensor)]
    return scripted(*[list(t) if isinstance(t, tuple) else t for t in tensors])
'''


def make_jit(name: str, options: dict) -> Mode:
    if name == "jit.trace":
        return JitTraceMode(name=name, options=options)
    if name == "jit.script":
        return JitScriptMode(name=name, options=options)
    raise KeyError(name)
