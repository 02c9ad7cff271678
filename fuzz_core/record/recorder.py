"""The recorder that runs a repro script inside the sandbox and writes what it did with torch as JSON.

Note [What the recorder records]
A ``TorchFunctionMode`` sees every overridable torch call the script makes (functions, Tensor methods and
operators, a few property reads such as ``.T`` and ``.grad``, ``torch.ops.*``), the outermost call only:
torch disables a mode inside its own handler, so the internals of ``F.softmax`` or of printing a tensor are
not recorded. Each call becomes a record: the name as torch spells the callable, the context stack around it
(``compile:<backend>``, ``jit.trace``, ``autocast:<device>:<dtype>``, ``func.vmap``, ``gradcheck`` …), the
script line, its arguments and result (tensors as id, shape, dtype, device, strides, contiguity, requires_grad
and, where cheap and safe, value statistics: NaN/Inf counts, -0.0, denormals, largest magnitude, mean, the
first values), scalar arguments as literals, and the exception when it raised. Tensor ids are given on first
sight and kept per object, so the reader can follow which call produced what another call consumed.

Code that torch runs outside Python is observed from its entry point: a ``torch.compile``d callable runs with
the mode taken off the stack (so dynamo never traces the recorder) and becomes one "compiled" record whose
``inner`` names the ops of the graphs that ran (a thin backend around the real one, built as torch.compile
builds it); a ``jit.trace``/``jit.script`` result runs under a ``TorchDispatchMode`` that records the ATen ops
the interpreter executes. ``torch.func`` transforms, ``torch.autograd.gradcheck`` and
``torch.testing.assert_close`` are recorded the same way, as one record around what ran inside.

What the script printed is kept line by line with the number of calls made before it, and how it ended:
clean, an exception (type, message, line), ``sys.exit(N)``, or the soft time limit (SIGALRM raises a
BaseException in the script's thread; a script stuck in C is killed from outside, and the file written at
the last flush, at most a second old, is what remains). The file is rewritten at most once a second while
the script runs, so a kill loses little.

Everything here is best effort and must never change what the script does: a failure to describe something
is recorded as such. Nothing is ever loaded or run by name from the recording.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import math
import os
import runpy
import signal
import sys
import time
import traceback
import types
from collections import deque
from typing import Any, Callable, Iterator

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

from fuzz_core.record import EMULABLE, FORMAT, RECORDER_VERSION

HEAD_CALLS = 3000  # the first calls are kept ...
TAIL_CALLS = 1000  # ... and the last ones (where the comparison usually is); the middle is counted
MAX_EVENTS = 300
MAX_OUTPUT_LINES = 400
MAX_LINE_CHARS = 300
MAX_STR_CHARS = 80
MAX_SEQ_ITEMS = 16
MAX_DEPTH = 3
MAX_DIMS = 12
MAX_INNER = 200
MAX_STATS_NUMEL = 1 << 22  # value statistics only for tensors up to this many elements
SAMPLE_VALUES = 6
FLUSH_EVERY_S = 1.0
MAX_OBSERVED_INNER_RECORDS = 300  # records kept inside one gradcheck/vmap/... call (they repeat)

# Tensor methods that only ask about metadata: called all the time, telling nothing.
_SKIPPED = frozenset({
    "size", "dim", "numel", "stride", "is_contiguous", "data_ptr", "element_size", "__len__", "__hash__",
    "storage_offset", "is_floating_point", "is_complex", "ndimension", "nelement", "has_names", "__index__",
    "dim_order", "untyped_storage", "_is_view", "__reduce_ex__", "__setstate__", "get_device", "is_pinned",
    "__iter__", "__contains__", "__array_wrap__", "is_signed", "is_shared", "_version", "__dlpack_device__",
    "__torch_function__", "is_inference", "is_set_to", "_typed_storage", "storage",
})
# Property reads worth recording (views and gradients); every other getter is skipped.
_GETTERS = frozenset({"T", "mT", "H", "mH", "grad", "real", "imag", "data"})
_FUNC_TRANSFORMS = ("vmap", "grad", "grad_and_value", "jacrev", "jacfwd", "hessian")
_FUNC_CALLS = ("vjp", "jvp", "linearize", "functional_call")


_THIS_FILE = os.path.realpath(__file__).removesuffix("c")
# Frames between a caller and the mode that are torch's dispatch plumbing, not the caller.
_PLUMBING_FILES = ("torch/overrides.py", "torch/_tensor.py", "torch/utils/_device.py", "torch/_ops.py",
                   "torch/utils/_contextlib.py", "torch/_compile.py")


class RecordingTimeout(BaseException):
    """Raised in the script's thread at the soft time limit (a BaseException, so `except Exception` lets it by)."""


def _float(value: float) -> float | str:
    """A float for JSON: non-finite values as the strings "nan", "inf", "-inf" (JSON has none)."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return float(value)


def _value(value: float) -> float | str:
    """A tensor element for the statistics: 9 significant digits are enough to tell two results apart."""
    value = _float(value)
    return float(f"{value:.9g}") if isinstance(value, float) else value


def _text(value: Any, limit: int = MAX_STR_CHARS) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _type_name(obj: Any) -> str:
    cls = obj if isinstance(obj, type) else type(obj)
    return _text(f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', cls.__name__)}", 120)


def _callable_name(func: Any) -> str:
    module = getattr(func, "__module__", None) or ""
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or type(func).__name__
    return _text(f"{module}.{name}" if module else str(name), 120)


def _graph_op_name(target: Any) -> str:
    """A graph node's function as torch spells it: ``torch.sin``, ``torch.nn.functional.gelu``, ``_operator.mul``."""
    if isinstance(target, str):
        return _text(target, 120)
    if isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return "torch.ops." + _text(target, 100)
    module = getattr(target, "__module__", None) or ""
    qualname = getattr(target, "__qualname__", "") or ""
    name = getattr(target, "__name__", None) or ""
    if qualname.startswith(("Tensor.", "TensorBase.")):
        return "torch.Tensor." + qualname.split(".", 1)[1]
    if name and (not qualname or qualname.startswith("_") or "." in qualname):
        return _text(f"{module}.{name}" if module else name, 120)
    return _callable_name(target)


def func_name(func: Any) -> tuple[str, str] | None:
    """(kind, name) of a callable torch hands to ``__torch_function__``; None for calls not worth recording."""
    if isinstance(func, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        text = str(func)
        namespace = text.split(".", 1)[0]
        return ("op" if namespace in ("aten", "prims") else "custom_op"), "torch.ops." + text
    name = getattr(func, "__name__", None)
    owner = getattr(func, "__self__", None)
    if name in ("__get__", "__set__", "__delete__") and owner is not None and not isinstance(owner, torch.Tensor):
        attr = getattr(owner, "__name__", None)
        if name != "__get__" or attr not in _GETTERS:
            return None
        return "getter", f"torch.Tensor.{attr}"
    objclass = getattr(func, "__objclass__", None)
    if isinstance(objclass, type) and issubclass(objclass, torch._C.TensorBase):
        return (None if name in _SKIPPED else ("method", f"torch.Tensor.{name}"))
    qualname = getattr(func, "__qualname__", "") or ""
    module = getattr(func, "__module__", "") or ""
    if qualname.startswith(("Tensor.", "TensorBase.")) and module.startswith("torch"):
        method = qualname.split(".", 1)[1]
        return (None if method in _SKIPPED else ("method", f"torch.Tensor.{method}"))
    if not name:
        return "function", _callable_name(func)
    return "function", _text(f"{module}.{name}" if module else name, 120)


class _Tee:
    """sys.stdout that also keeps the script's lines, each with the number of calls recorded before it."""

    def __init__(self, real: Any, recorder: Recorder) -> None:
        self.real = real
        self.recorder = recorder
        self.pending = ""

    def write(self, text: str) -> int:
        written = self.real.write(text)
        try:
            self.pending += str(text)
            while "\n" in self.pending:
                line, self.pending = self.pending.split("\n", 1)
                self.recorder.printed(line)
            if len(self.pending) > 4 * MAX_LINE_CHARS:
                self.recorder.printed(self.pending)
                self.pending = ""
        except Exception:  # noqa: BLE001 - recording must never break the script's output
            pass
        return written

    def flush(self) -> None:
        self.real.flush()

    def finish(self) -> None:
        if self.pending:
            self.recorder.printed(self.pending)
            self.pending = ""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class _FunctionMode(TorchFunctionMode):
    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder = recorder

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        # One line calls `func` on every path: jit.trace notes the Python line of each op, and torch's check
        # of a trace compares two traces' graphs, lines included.
        kwargs = kwargs or {}
        rec = self.recorder
        pending = None
        if not (rec.busy or rec.suspended):
            try:
                named = func_name(func)
            except Exception:  # noqa: BLE001
                named = None
            if named is not None:
                pending = rec.begin(named[1], named[0], args, kwargs, func)
        if rec.emulate:  # Note [CUDA on the CPU]: asked for after the script failed for want of a device
            func, args, kwargs, moved = _on_cpu(func, args, kwargs, rec.emulate)
            if moved is not None and pending is not None:
                pending["emulated"] = moved
        first = rec.count
        try:
            result = func(*args, **kwargs)
        except RecordingTimeout:
            raise
        except BaseException as exc:
            rec.end(pending, None, exc)
            raise
        if pending is not None and pending["kind"] == "custom_op":  # its body's calls (see _patch_library)
            pending["inner"] = list(dict.fromkeys(r["name"] for r in rec._records_since(first)))[:MAX_INNER]
        rec.end(pending, result, None)
        return result


# Note [CUDA on the CPU]
# A report's repro usually runs on an accelerator (CUDA, Apple's MPS) which this machine may lack: it then fails
# at its first call there and records little. The caller may run it again with `emulate` naming the devices it
# wanted: every device argument that names one of them becomes cpu (factory functions, ``.to``, ``.cuda()``,
# module moves, autocast), ``torch.cuda``'s and ``torch.mps``'s seeding, synchronising and cache calls do
# nothing, and each call that asked for such a device is marked ``emulated`` with its name. What it computes
# is the CPU's result, so the run says which ops, dtypes, shapes and modes the script used, never whether the
# device's bug reproduces.


def _device_type(value: Any) -> str | None:
    if isinstance(value, torch.device):
        return value.type
    kind = value.split(":", 1)[0] if isinstance(value, str) else None
    return kind if kind in EMULABLE else None


def _on_cpu(func: Any, args: tuple, kwargs: dict, devices: tuple[str, ...]) -> tuple[Any, tuple, dict, str | None]:
    """The call with the `devices` replaced by cpu, and the device it asked for (None: nothing replaced)."""
    name = getattr(func, "__name__", None)
    if name == "cuda" and "cuda" in devices and isinstance(getattr(func, "__objclass__", None), type) and args:
        return torch.Tensor.cpu, (args[0],), {}, "cuda"
    moved = None
    if "device" in kwargs and _device_type(kwargs["device"]) in devices:
        moved = _device_type(kwargs["device"])
        kwargs = {**kwargs, "device": "cpu"}
    asked = [_device_type(a) for a in args]
    if any(device in devices for device in asked):
        moved = moved or next(device for device in asked if device in devices)
        args = tuple("cpu" if device in devices else a for a, device in zip(args, asked))
    return func, args, kwargs, moved


def _patch_device_runtime(devices: tuple[str, ...]) -> None:
    for device in devices:
        runtime = getattr(torch, device, None)
        for name in ("synchronize", "empty_cache", "manual_seed", "manual_seed_all", "reset_peak_memory_stats",
                     "ipc_collect", "set_device"):
            if runtime is not None and hasattr(runtime, name):
                setattr(runtime, name, lambda *a, **k: None)
    cls = torch.amp.autocast_mode.autocast
    real_init = cls.__init__

    def __init__(this: Any, device_type: Any = "cuda", *args: Any, **kwargs: Any) -> None:
        this._transfuzz_asked = str(device_type)
        real_init(this, "cpu" if str(device_type) in devices else device_type, *args, **kwargs)

    cls.__init__ = __init__  # type: ignore[method-assign]


class _DispatchObserver(TorchDispatchMode):
    """ATen ops run by a scripted or traced callable (the interpreter runs them outside Python)."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder = recorder

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        rec = self.recorder
        pending = None if rec.busy or rec.suspended else rec.begin("torch.ops." + str(func), "aten", args, kwargs, None)
        try:
            with rec.suspended_recording():  # an OpOverload call meets the function mode again: once is enough
                result = func(*args, **kwargs)
        except RecordingTimeout:
            raise
        except BaseException as exc:
            rec.end(pending, None, exc)
            raise
        rec.end(pending, result, None)
        return result


class _GraphBackend:
    """The backend torch.compile would use, plus a note of the ops of each graph it compiles and runs."""

    def __init__(self, recorder: Recorder, real: Any) -> None:
        self.recorder = recorder
        self.real = real
        self.__name__ = "transfuzz_recording_backend"

    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        ops: list[str] = []
        for node in gm.graph.nodes:
            if node.op in ("call_function", "call_method", "call_module"):
                target = node.target
                if node.op == "call_function":
                    ops.append(_graph_op_name(target))
                elif node.op == "call_method":
                    ops.append(f"torch.Tensor.{target}")
                else:
                    ops.append(_type_name(gm.get_submodule(str(target))) if isinstance(target, str) else "module")
        ops = ops[:MAX_INNER]
        self.recorder.event("graph", {"ops": ops})
        compiled = self.real(gm, example_inputs, **kwargs)
        runs = self.recorder.graph_runs

        def run(*args: Any, **kw: Any) -> Any:
            runs.append(ops)
            return compiled(*args, **kw)

        if hasattr(compiled, "_boxed_call"):
            run._boxed_call = compiled._boxed_call  # type: ignore[attr-defined]
        return run


class Recorder:
    def __init__(self, script: str, out: str, soft_timeout_s: float | None = None) -> None:
        self.script = os.path.realpath(script)
        self.out = out
        self.soft_timeout_s = soft_timeout_s
        self.started = time.monotonic()
        self.head: list[dict[str, Any]] = []
        self.tail: deque[dict[str, Any]] = deque(maxlen=TAIL_CALLS)
        self.count = 0
        self.events: list[dict[str, Any]] = []
        self.events_dropped = 0
        self.output: list[dict[str, Any]] = []
        self.output_dropped = 0
        self.ctx: list[str] = []
        self.modules: list[str] = []
        self.graph_runs: list[list[str]] = []
        self.busy = 0
        self.suspended = 0
        self.scripting = 0  # torch.jit.script calls in progress (it scripts what it meets through itself)
        self.emulate: tuple[str, ...] = ()  # devices run on the CPU instead: Note [CUDA on the CPU]
        self.status = "running"
        self.exit_code: int | None = None
        self.exception: dict[str, Any] | None = None
        self._tids: WeakIdKeyDictionary = WeakIdKeyDictionary()
        self._next_tid = 0
        self._stats: dict[tuple[int, int], dict[str, Any] | None] = {}
        self._signatures: dict[int, tuple[list[str], dict[str, Any]] | None] = {}
        self._last_flush = 0.0
        self._dirty = False
        self._alarm_pending = False
        self._inner_budget: list[int] = []
        self.mode = _FunctionMode(self)
        self.dispatch = _DispatchObserver(self)
        self._hooks: list[Any] = []

    # --- describing values -------------------------------------------------------------------------------

    def _tid(self, tensor: torch.Tensor) -> int:
        tid = self._tids.get(tensor)
        if tid is None:
            tid = self._tids[tensor] = self._next_tid
            self._next_tid += 1
        return tid

    def _stats_allowed(self, tensor: torch.Tensor) -> bool:
        if type(tensor) not in (torch.Tensor, torch.nn.Parameter):
            return False  # subclasses, fake and functorch-wrapped tensors
        if tensor.layout != torch.strided or tensor.is_quantized or tensor.device.type != "cpu":
            return False
        if any(c.startswith("func.") for c in self.ctx):
            return False
        try:
            if torch._C._functorch.is_functorch_wrapped_tensor(tensor):
                return False
        except Exception:  # noqa: BLE001
            pass
        return tensor.numel() <= MAX_STATS_NUMEL

    def _value_stats(self, tensor: torch.Tensor) -> dict[str, Any] | None:
        key = (self._tid(tensor), int(getattr(tensor, "_version", 0)))
        if key in self._stats:
            return self._stats[key]
        stats: dict[str, Any] | None = None
        try:
            with torch.no_grad():
                data = tensor.detach()
                if data.is_complex():
                    data = torch.view_as_real(data)
                flat = data.reshape(-1)
                if data.dtype == torch.bool:
                    stats = {"sample": [int(v) for v in flat[:SAMPLE_VALUES].tolist()],
                             "true": int(flat.sum().item())}
                elif not data.is_floating_point():
                    stats = {"sample": [int(v) for v in flat[:SAMPLE_VALUES].tolist()]}
                    if flat.numel():
                        stats.update(min=int(flat.min().item()), max=int(flat.max().item()))
                else:
                    stats = self._float_stats(flat)
        except Exception:  # noqa: BLE001 - an odd tensor: no statistics
            stats = None
        if len(self._stats) > 50_000:
            self._stats.clear()
        self._stats[key] = stats
        return stats

    @staticmethod
    def _float_stats(flat: torch.Tensor) -> dict[str, Any]:
        stats: dict[str, Any] = {"sample": [_value(v) for v in flat[:SAMPLE_VALUES].double().tolist()]}
        if flat.numel() == 0:
            return stats
        nan = torch.isnan(flat)
        posinf, neginf = torch.isposinf(flat), torch.isneginf(flat)
        finite = flat[~(nan | posinf | neginf)].double()
        zero = flat == 0
        stats.update(nan=int(nan.sum().item()), posinf=int(posinf.sum().item()), neginf=int(neginf.sum().item()),
                     negzero=bool((zero & torch.signbit(flat)).any().item()))
        if finite.numel():
            magnitude = finite.abs()
            tiny = torch.finfo(flat.dtype).tiny
            nonzero = magnitude[magnitude > 0]
            stats.update(max_abs=_value(magnitude.max().item()), mean=_value(finite.mean().item()),
                         denormal=bool((nonzero < tiny).any().item()))
            if nonzero.numel():
                stats["min_abs"] = _value(nonzero.min().item())
        return stats

    def tensor_meta(self, tensor: torch.Tensor) -> dict[str, Any]:
        meta: dict[str, Any] = {"id": self._tid(tensor)}
        try:
            shape = [int(s) for s in tensor.shape]
            meta.update(shape=shape[:MAX_DIMS], dtype=str(tensor.dtype).removeprefix("torch."),
                        device=tensor.device.type, requires_grad=bool(tensor.requires_grad))
            if type(tensor) not in (torch.Tensor, torch.nn.Parameter):
                meta["subclass"] = _type_name(tensor)
            if tensor.layout != torch.strided:
                meta["layout"] = str(tensor.layout).removeprefix("torch.")
            else:
                stride = [int(s) for s in tensor.stride()]
                meta["stride"] = stride[:MAX_DIMS]
                meta["contiguous"] = bool(tensor.is_contiguous())
                if tensor.dim() == 4:
                    meta["channels_last"] = bool(tensor.is_contiguous(memory_format=torch.channels_last))
                elif tensor.dim() == 5:
                    meta["channels_last"] = bool(tensor.is_contiguous(memory_format=torch.channels_last_3d))
                meta["expanded"] = any(st == 0 and sz > 1 for st, sz in zip(stride, shape))
            if self._stats_allowed(tensor):
                stats = self._value_stats(tensor)
                if stats is not None:
                    meta["stats"] = stats
        except Exception as exc:  # noqa: BLE001
            meta["unreadable"] = _text(type(exc).__name__)
        return meta

    def describe(self, value: Any, depth: int = 0) -> dict[str, Any]:
        if isinstance(value, torch.Tensor):
            return {"type": "tensor", "tensor": self.tensor_meta(value)}
        if value is None:
            return {"type": "none"}
        if isinstance(value, bool):
            return {"type": "bool", "value": value}
        if isinstance(value, int):
            return {"type": "int", "value": value if abs(value) < 1 << 62 else _float(float(value))}
        if isinstance(value, float):
            return {"type": "float", "value": _float(value)}
        if isinstance(value, complex):
            return {"type": "complex", "items": [{"type": "float", "value": _float(value.real)},
                                                 {"type": "float", "value": _float(value.imag)}]}
        if isinstance(value, str):
            return {"type": "str", "value": _text(value)}
        if isinstance(value, torch.dtype):
            return {"type": "dtype", "value": str(value).removeprefix("torch.")}
        if isinstance(value, torch.device):
            return {"type": "device", "value": _text(value)}
        if isinstance(value, torch.memory_format):
            return {"type": "memory_format", "value": str(value).removeprefix("torch.")}
        if isinstance(value, torch.layout):
            return {"type": "layout", "value": str(value).removeprefix("torch.")}
        if isinstance(value, (list, tuple)):
            if depth >= MAX_DEPTH:
                return {"type": "seq", "items": [], "length": len(value)}
            return {"type": "seq", "items": [self.describe(v, depth + 1) for v in value[:MAX_SEQ_ITEMS]],
                    "length": len(value)}
        if isinstance(value, slice):
            return {"type": "slice", "items": [self.describe(v, depth + 1) for v in (value.start, value.stop, value.step)]}
        if value is Ellipsis:
            return {"type": "ellipsis"}
        if isinstance(value, torch.nn.Module):
            return {"type": "module", "value": _type_name(value)}
        if callable(value):
            return {"type": "callable", "value": _callable_name(value)}
        return {"type": "other", "value": _type_name(value)}

    def _signature(self, func: Any) -> tuple[list[str], dict[str, Any]] | None:
        """(positional parameter names, scalar defaults) of a Python-level torch function; builtins have none."""
        if func is None or not isinstance(func, types.FunctionType):
            return None
        key = id(func)
        if key not in self._signatures:
            try:
                parameters = list(inspect.signature(func).parameters.values())
                names = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
                defaults = {p.name: self.describe(p.default) for p in parameters
                            if p.default is not p.empty and (p.default is None or
                                                             isinstance(p.default, (bool, int, float, str)))}
                self._signatures[key] = (names, defaults)
            except (TypeError, ValueError):
                self._signatures[key] = None
        return self._signatures[key]

    def _where(self, func: Any) -> tuple[int | None, str]:
        """(line of the script the call came from, the file that made the call: "<script>" or a short path)."""
        skip_code = getattr(getattr(func, "__wrapped__", func), "__code__", None)
        frame = sys._getframe(2)
        caller = ""
        for _ in range(80):
            if frame is None:
                break
            filename = frame.f_code.co_filename
            if filename == self.script:
                return frame.f_lineno, caller or "<script>"
            if not caller and frame.f_code is not skip_code and filename != _THIS_FILE \
                    and not filename.endswith(_PLUMBING_FILES):
                caller = _short_path(filename)
            frame = frame.f_back
        return None, caller or "?"

    # --- records ---------------------------------------------------------------------------------------

    def begin(self, name: str, kind: str, args: tuple, kwargs: dict, func: Any) -> dict[str, Any] | None:
        """The record of a call about to run (its arguments as they are before it runs), or None."""
        if self._inner_budget:
            if self._inner_budget[-1] <= 0:
                return None
            self._inner_budget[-1] -= 1
        self.busy += 1
        try:
            with _not_traced():
                return self._begin(name, kind, args, kwargs, func)
        finally:
            self.busy -= 1

    def _begin(self, name: str, kind: str, args: tuple, kwargs: dict, func: Any) -> dict[str, Any] | None:
        try:
            line, caller = self._where(func)
            record: dict[str, Any] = {"name": name, "kind": kind, "ctx": list(self.ctx), "line": line,
                                      "caller": caller}
            if self.modules:
                record["module"] = self.modules[-1]
            record["args"] = [self.describe(a) for a in args[:MAX_SEQ_ITEMS]]
            if kwargs:
                record["kwargs"] = {_text(k, 60): self.describe(v) for k, v in list(kwargs.items())[:MAX_SEQ_ITEMS]}
            signature = self._signature(func)
            if signature is not None and signature[0]:
                record["arg_names"] = signature[0][:MAX_SEQ_ITEMS]
            if signature is not None and signature[1]:
                record["arg_defaults"] = dict(list(signature[1].items())[:MAX_SEQ_ITEMS])
            return record
        except Exception:  # noqa: BLE001
            return None

    def end(self, record: dict[str, Any] | None, result: Any, error: BaseException | None) -> int | None:
        if record is None:
            return None
        self.busy += 1
        try:
            if error is not None:
                record["error"] = _text(f"{type(error).__name__}: {error}", MAX_LINE_CHARS)
            elif result is not None:
                with _not_traced():
                    record["out"] = self.describe(result)
            return self._append(record)
        except Exception:  # noqa: BLE001
            return None
        finally:
            self.busy -= 1

    def _append(self, record: dict[str, Any]) -> int:
        record["i"] = self.count
        self.count += 1
        if len(self.head) < HEAD_CALLS:
            self.head.append(record)
        else:
            self.tail.append(record)
        self._dirty = True
        self.maybe_flush()
        return record["i"]

    def event(self, kind: str, detail: dict[str, Any]) -> None:
        if len(self.events) >= MAX_EVENTS:
            self.events_dropped += 1
            return
        self.events.append({"at": self.count, "type": kind, "detail": detail})
        self._dirty = True

    def printed(self, line: str) -> None:
        if len(self.output) >= MAX_OUTPUT_LINES:
            self.output_dropped += 1
            return
        self.output.append({"at": self.count, "text": _text(line, MAX_LINE_CHARS)})
        self._dirty = True

    # --- pausing ---------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Our function mode off the stack and the module hooks off: code torch compiles never sees them."""
        from torch.overrides import _get_current_function_mode_stack, _pop_mode_temporarily

        hooks = self._remove_module_hooks()
        try:
            stack = _get_current_function_mode_stack()
            if stack and stack[-1] is self.mode:
                with _pop_mode_temporarily():
                    yield
            else:
                self.suspended += 1
                try:
                    yield
                finally:
                    self.suspended -= 1
        finally:
            if hooks:
                self._add_module_hooks()

    @contextlib.contextmanager
    def suspended_recording(self) -> Iterator[None]:
        self.suspended += 1
        try:
            yield
        finally:
            self.suspended -= 1

    @contextlib.contextmanager
    def context(self, name: str) -> Iterator[None]:
        self.ctx.append(name)
        try:
            yield
        finally:
            if self.ctx and self.ctx[-1] == name:
                self.ctx.pop()
            elif name in self.ctx:
                self.ctx.remove(name)

    # --- entry points torch runs outside the function mode ---------------------------------------------

    def observed_call(self, real: Any, label: str, ctx: str, *, how: str) -> Callable[..., Any]:
        """A callable that runs `real` under context `ctx` and records one call named `label` around it.

        how: "compile" (mode off, graph ops from the backend), "jit" (ATen ops via the dispatch observer),
        "python" (the calls inside are recorded as usual, at most MAX_OBSERVED_INNER_RECORDS of them).
        """
        recorder = self

        def call(*args: Any, **kwargs: Any) -> Any:
            if recorder.busy or recorder.suspended:
                return real(*args, **kwargs)
            record = recorder.begin(label, "compiled" if how != "python" else "transform", args, kwargs, None)
            first = recorder.count
            recorder.graph_runs = []
            inner: list[str] = []
            error: BaseException | None = None
            result: Any = None
            try:
                with recorder.context(ctx):
                    if how == "compile":
                        with recorder.paused():
                            result = real(*args, **kwargs)
                    elif how == "jit":
                        with recorder.dispatch:
                            result = real(*args, **kwargs)
                    else:
                        recorder._inner_budget.append(MAX_OBSERVED_INNER_RECORDS)
                        try:
                            result = real(*args, **kwargs)
                        finally:
                            recorder._inner_budget.pop()
            except RecordingTimeout:
                raise
            except BaseException as exc:
                error = exc
            if how == "compile":
                for ops in recorder.graph_runs:
                    inner.extend(ops)
            else:
                inner = [r["name"] for r in recorder._records_since(first)]
            if record is not None:
                record["inner"] = list(dict.fromkeys(inner))[:MAX_INNER]
                recorder.end(record, result, error)
            if error is not None:
                raise error
            return result

        return call

    def _records_since(self, first: int) -> list[dict[str, Any]]:
        found = [r for r in self.tail if r["i"] >= first] if self.tail else []
        return [r for r in self.head if r["i"] >= first] + found

    def observe(self, obj: Any, label: str, ctx: str, *, how: str) -> Any:
        """`obj` (a function, module, or compiled/scripted object) with its calls observed."""
        if obj is None or not callable(obj):
            return obj
        if isinstance(obj, torch.nn.Module) and type(type(obj)) is type:
            base = type(obj)
            real_call = base.__call__
            call = self.observed_call(lambda *a, **k: real_call(obj, *a, **k), label, ctx, how=how)
            observed = type(base.__name__, (base,), {"__call__": lambda this, *a, **k: call(*a, **k),
                                                      "__module__": base.__module__,
                                                      "__qualname__": base.__qualname__})
            try:
                object.__setattr__(obj, "__class__", observed)
            except TypeError:
                pass  # a class that refuses: left as it is (its calls are not observed)
            return obj
        call = self.observed_call(obj, label, ctx, how=how)
        if isinstance(obj, (types.FunctionType, types.MethodType, functools.partial)):
            return functools.wraps(obj)(call) if isinstance(obj, types.FunctionType) else call
        return _ObservedObject(obj, call)

    # --- installing ------------------------------------------------------------------------------------

    def _module_pre(self, module: Any, args: Any) -> None:
        cls = type(module)
        if (getattr(cls, "__module__", "") or "").startswith("torch.nn"):
            self.modules.append(f"{cls.__module__}.{cls.__qualname__}")
        else:
            self.modules.append("")

    def _module_post(self, module: Any, args: Any, output: Any) -> None:
        if self.modules:
            self.modules.pop()

    def _add_module_hooks(self) -> None:
        from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

        self._hooks = [register_module_forward_pre_hook(self._module_pre),
                       register_module_forward_hook(self._module_post, always_call=True)]

    def _remove_module_hooks(self) -> bool:
        hooks, self._hooks = self._hooks, []
        for hook in hooks:
            hook.remove()
        return bool(hooks)

    def install(self) -> None:
        if self.emulate:
            _patch_device_runtime(self.emulate)
        self._add_module_hooks()
        self._patch_compile()
        self._patch_jit()
        self._patch_autocast()
        self._patch_func()
        self._patch_checks()
        self._patch_library()

    def _patch_compile(self) -> None:
        real_compile = torch.compile
        recorder = self

        def compile(model: Any = None, **kwargs: Any) -> Any:  # noqa: A001 - torch.compile's name
            if model is None:
                return lambda m: compile(m, **kwargs)
            backend = kwargs.get("backend")
            backend_name = backend if isinstance(backend, str) else "inductor" if backend is None \
                else _callable_name(backend)
            mode = kwargs.get("mode")
            recorder.event("compile", {"backend": _text(backend_name), "mode": _text(mode) if mode else None,
                                       "fullgraph": bool(kwargs.get("fullgraph", False)),
                                       "dynamic": kwargs.get("dynamic") if isinstance(kwargs.get("dynamic"), bool)
                                       else None})
            wrapped = dict(kwargs)
            with recorder.paused():
                real_backend = recorder._real_backend(backend, mode, kwargs.get("options"), kwargs.get("dynamic"))
                if real_backend is not None:
                    wrapped["backend"] = _GraphBackend(recorder, real_backend)
                    wrapped.pop("mode", None)
                compiled = real_compile(model, **wrapped)
            short = backend_name if isinstance(backend, str) or backend is None else "custom"
            return recorder.observe(compiled, "torch.compile", f"compile:{short}", how="compile")

        functools.update_wrapper(compile, real_compile)
        torch.compile = compile  # type: ignore[assignment]

    @staticmethod
    def _real_backend(backend: Any, mode: Any, options: Any, dynamic: Any) -> Any:
        """The backend object torch.compile builds for these arguments, or None (then it is left alone)."""
        if options is not None:
            return None
        try:
            if backend is None or backend == "inductor":
                return torch._TorchCompileInductorWrapper(mode or "default", None, dynamic)
            if isinstance(backend, str):
                return torch._TorchCompileWrapper(backend, mode, None, dynamic)
            if callable(backend) and mode is None:
                return backend
        except Exception:  # noqa: BLE001
            return None
        return None

    def _patch_jit(self) -> None:
        recorder = self
        jit = torch.jit
        real_trace, real_script = jit.trace, jit.script
        real_trace_module = getattr(jit, "trace_module", None)

        def trace(func: Any, *args: Any, **kwargs: Any) -> Any:
            if "jit.trace" in recorder.ctx:  # torch's own re-trace while checking a trace: not the script's
                with recorder.suspended_recording():
                    return real_trace(func, *args, **kwargs)
            with recorder.context("jit.trace"):
                traced = real_trace(func, *args, **kwargs)
            recorder.event("jit.trace", {"target": _callable_name(func)})
            return recorder.observe(traced, "torch.jit.trace", "jit.trace:run", how="jit")

        def script(obj: Any, *args: Any, **kwargs: Any) -> Any:
            if recorder.scripting:  # torch scripting what the script's function calls: torch's own business
                return real_script(obj, *args, **kwargs)
            recorder.scripting += 1
            try:
                with recorder.suspended_recording():
                    scripted = real_script(obj, *args, **kwargs)
            finally:
                recorder.scripting -= 1
            recorder.event("jit.script", {"target": _callable_name(obj)})
            if isinstance(obj, type):  # a scripted class: left alone
                return scripted
            return recorder.observe(scripted, "torch.jit.script", "jit.script:run", how="jit")

        functools.update_wrapper(trace, real_trace)
        functools.update_wrapper(script, real_script)
        jit.trace, jit.script = trace, script  # type: ignore[assignment]
        if real_trace_module is not None:
            def trace_module(mod: Any, *args: Any, **kwargs: Any) -> Any:
                if "jit.trace" in recorder.ctx:  # jit.trace of a module goes through here: observed once
                    return real_trace_module(mod, *args, **kwargs)
                with recorder.context("jit.trace"):
                    traced = real_trace_module(mod, *args, **kwargs)
                return recorder.observe(traced, "torch.jit.trace", "jit.trace:run", how="jit")

            functools.update_wrapper(trace_module, real_trace_module)
            jit.trace_module = trace_module  # type: ignore[assignment]

    def _patch_autocast(self) -> None:
        recorder = self
        cls = torch.amp.autocast_mode.autocast
        real_enter, real_exit = cls.__enter__, cls.__exit__

        def __enter__(this: Any) -> Any:
            result = real_enter(this)
            try:
                dtype = str(getattr(this, "fast_dtype", "?")).removeprefix("torch.")
                enabled = bool(getattr(this, "_enabled", True))
                device = getattr(this, "_transfuzz_asked", None) or getattr(this, "device", "?")
                name = f"autocast:{device}:{dtype}" if enabled else "autocast:off"
                this._transfuzz_ctx = name
                recorder.ctx.append(name)
                recorder.event("autocast", {"device": _text(getattr(this, "device", "?")), "dtype": dtype,
                                            "enabled": enabled})
            except Exception:  # noqa: BLE001
                pass
            return result

        def __exit__(this: Any, *exc: Any) -> Any:
            name = getattr(this, "_transfuzz_ctx", None)
            if name is not None and name in recorder.ctx:
                index = len(recorder.ctx) - 1 - recorder.ctx[::-1].index(name)
                del recorder.ctx[index]
            return real_exit(this, *exc)

        cls.__enter__, cls.__exit__ = __enter__, __exit__  # type: ignore[method-assign]

    def _patch_func(self) -> None:
        recorder = self
        modules = [m for m in (getattr(torch, "func", None),) if m is not None]
        for module in modules:
            for name in _FUNC_TRANSFORMS:
                real = getattr(module, name, None)
                if real is None:
                    continue

                def transform(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
                    made = _real(*args, **kwargs)
                    if not callable(made):
                        return made
                    return recorder.observe(made, f"torch.func.{_name}", f"func.{_name}", how="python")

                functools.update_wrapper(transform, real)
                setattr(module, name, transform)
            for name in _FUNC_CALLS:
                real = getattr(module, name, None)
                if real is not None:
                    wrapped = recorder.observed_call(real, f"torch.func.{name}", f"func.{name}", how="python")
                    setattr(module, name, functools.wraps(real)(wrapped))
        if hasattr(torch, "vmap") and hasattr(torch, "func"):
            torch.vmap = torch.func.vmap  # type: ignore[attr-defined]

    def _patch_library(self) -> None:
        """A ``torch.library.custom_op``'s body runs with the mode pushed again: what it calls is recorded."""
        library = getattr(torch, "library", None)
        real = getattr(library, "custom_op", None)
        if real is None:
            return
        recorder = self

        def wrap(name: Any, fn: Any) -> Any:
            @functools.wraps(fn)
            def body(*args: Any, **kwargs: Any) -> Any:
                from torch.overrides import _get_current_function_mode_stack

                if recorder.mode in _get_current_function_mode_stack():
                    return fn(*args, **kwargs)
                with recorder.context(f"custom_op:{_text(name, 60)}"), recorder.mode:
                    return fn(*args, **kwargs)

            return body

        def custom_op(name: Any, fn: Any = None, /, **kwargs: Any) -> Any:
            if fn is None:
                decorator = real(name, **kwargs)
                return lambda f: decorator(wrap(name, f))
            return real(name, wrap(name, fn), **kwargs)

        functools.update_wrapper(custom_op, real)
        library.custom_op = custom_op  # type: ignore[attr-defined]

    def _patch_checks(self) -> None:
        recorder = self
        for module, name in ((torch.autograd, "gradcheck"), (torch.autograd, "gradgradcheck")):
            real = getattr(module, name, None)
            if real is not None:
                wrapped = recorder.observed_call(real, f"torch.autograd.{name}", name, how="python")
                setattr(module, name, functools.wraps(real)(wrapped))
        real_assert = torch.testing.assert_close

        def assert_close(actual: Any, expected: Any, *args: Any, **kwargs: Any) -> Any:
            if recorder.busy or recorder.suspended:
                return real_assert(actual, expected, *args, **kwargs)
            record = recorder.begin("torch.testing.assert_close", "check", (actual, expected, *args), kwargs, None)
            try:
                with recorder.suspended_recording():
                    result = real_assert(actual, expected, *args, **kwargs)
            except RecordingTimeout:
                raise
            except BaseException as exc:
                recorder.end(record, None, exc)
                raise
            recorder.end(record, result, None)
            return result

        functools.update_wrapper(assert_close, real_assert)
        torch.testing.assert_close = assert_close  # type: ignore[assignment]

    # --- the time limit and writing ----------------------------------------------------------------------

    def _on_alarm(self, signum: int, frame: Any) -> None:
        if self.busy:
            self._alarm_pending = True
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            return
        signal.setitimer(signal.ITIMER_REAL, 1.0)  # again, should the script swallow it
        self.status = "timeout"
        self.flush()  # written now, whatever the script does with the exception
        raise RecordingTimeout(f"the recording's time limit ({self.soft_timeout_s:g} s) was reached")

    def snapshot(self) -> dict[str, Any]:
        calls = self.head + list(self.tail)
        return {
            "format": FORMAT, "recorder": RECORDER_VERSION, "torch": torch.__version__, "status": self.status,
            "emulated": list(self.emulate),
            "exit_code": self.exit_code, "exception": self.exception, "seconds": round(time.monotonic() - self.started, 3),
            "calls": calls, "calls_total": self.count, "calls_dropped": self.count - len(calls),
            "events": self.events, "events_dropped": self.events_dropped,
            "output": self.output, "output_dropped": self.output_dropped,
        }

    def maybe_flush(self) -> None:
        now = time.monotonic()
        if self._dirty and now - self._last_flush >= FLUSH_EVERY_S:
            self.flush()

    def flush(self) -> None:
        self.busy += 1
        try:
            part = self.out + ".part"
            with open(part, "w", encoding="utf-8") as handle:
                json.dump(self.snapshot(), handle, allow_nan=False, default=_text)
            os.replace(part, self.out)
            self._last_flush = time.monotonic()
            self._dirty = False
        except Exception:  # noqa: BLE001 - a full disk or an odd value: the next flush tries again
            pass
        finally:
            self.busy -= 1

    def ended(self, exc: BaseException | None) -> int:
        """Set status and exit code from how the script ended; the exit code the process should give."""
        if exc is None:
            self.status, self.exit_code = "ok", 0
            return 0
        if isinstance(exc, SystemExit):
            code = exc.code
            self.exit_code = code if isinstance(code, int) else (0 if code is None else 1)
            self.status = "ok" if self.exit_code == 0 else "exit"
            return self.exit_code
        frames = traceback.extract_tb(exc.__traceback__)
        line = next((f.lineno for f in reversed(frames) if f.filename == self.script), None)
        innermost = frames[-1].filename if frames else ""
        self.exception = {
            "type": _text(_type_name(exc).removeprefix("builtins."), 120),
            "message": _text(exc, MAX_LINE_CHARS * 2),
            "line": line,
            "in_script": bool(frames) and innermost == self.script,
            "where": _text(_short_path(innermost), 160),
        }
        self.status = "timeout" if isinstance(exc, RecordingTimeout) else "raised"
        self.exit_code = 124 if isinstance(exc, RecordingTimeout) else 1
        return self.exit_code


@contextlib.contextmanager
def _not_traced() -> Iterator[None]:
    """jit.trace off while the recorder reads tensors: sizes and statistics never enter a traced graph."""
    state = torch._C._get_tracing_state()
    if state is None:
        yield
        return
    torch._C._set_tracing_state(None)
    try:
        yield
    finally:
        torch._C._set_tracing_state(state)


def _short_path(path: str) -> str:
    """A file as a package path ("torch/nn/modules/conv.py") when installed, else its last three parts."""
    parts = path.replace("\\", "/").split("/")
    if "site-packages" in parts:
        return "/".join(parts[len(parts) - 1 - parts[::-1].index("site-packages") + 1:])
    return "/".join(parts[-3:])


class _ObservedObject:
    """A scripted function (a C++ object that cannot be subclassed) with its calls observed."""

    def __init__(self, real: Any, call: Callable[..., Any]) -> None:
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_call", call)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def __repr__(self) -> str:
        return repr(self._real)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: run_script.py SCRIPT OUT.json [SOFT_DEADLINE [emulate:DEVICE,...]]", file=sys.stderr)
        return 2
    script, out = argv[0], argv[1]
    deadline = float(argv[2]) if len(argv) > 2 else 0.0  # wall-clock time (time.time()) of the soft limit
    soft = max(0.5, deadline - time.time()) if deadline > 0 else None
    recorder = Recorder(script, out, soft)
    if len(argv) > 3 and argv[3].startswith("emulate:"):
        recorder.emulate = tuple(d for d in argv[3][len("emulate:"):].split(",") if d in EMULABLE)
    sys.argv = [recorder.script]
    recorder.flush()  # something to read even if the script kills us at once
    tee = _Tee(sys.stdout, recorder)
    real_stdout = sys.stdout
    sys.stdout = tee
    if soft:
        signal.signal(signal.SIGALRM, recorder._on_alarm)
        signal.setitimer(signal.ITIMER_REAL, soft)
    error: BaseException | None = None
    try:
        recorder.install()
        with recorder.mode:
            runpy.run_path(recorder.script, run_name="__main__")
    except BaseException as exc:  # noqa: BLE001 - everything the script does is recorded, then reported
        error = exc
    finally:
        if soft:
            signal.setitimer(signal.ITIMER_REAL, 0)
        with contextlib.suppress(Exception):
            tee.finish()
        sys.stdout = real_stdout
    code = recorder.ended(error)
    recorder.flush()
    if error is not None and not isinstance(error, SystemExit):
        traceback.print_exception(error, file=sys.stderr)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    return code
