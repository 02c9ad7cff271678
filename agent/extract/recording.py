"""The recording of a report's repro (fuzz_core/record) read back as typed, bounded, untrusted data.

The sandboxed script ran in the same process as the recorder, so the JSON file may say anything: it is
parsed with a size cap, every string is stripped of NUL, lone surrogates and control characters and cut to a
length, every list is cut to a count, and then it must fit these models exactly (``extra="forbid"``), or it is
rejected with the first reason pydantic gives. Nothing in it is ever imported, called or evaluated: names
stay strings, checked against torch's public namespace (fuzz_core.api_names) only where a pattern needs one.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from fuzz_core.record import FORMAT

MAX_RECORDING_BYTES = 8 * 1024 * 1024
MAX_CALLS = 4000
MAX_EVENTS = 300
MAX_OUTPUT = 400
MAX_ITEMS = 16
MAX_DIMS = 12
MAX_INNER = 200
MAX_CTX = 16

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]|[\ud800-\udfff]")


class RecordingRejected(ValueError):
    """A recording file that is missing, too large, not JSON, or not the recorder's format."""


def _clean_text(value: Any, limit: int) -> Any:
    if not isinstance(value, str):
        return value
    value = _CONTROL.sub("", value.replace("\t", " "))
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _cut(limit: int) -> BeforeValidator:
    return BeforeValidator(lambda v: v[:limit] if isinstance(v, list) else v)


def _text(limit: int) -> BeforeValidator:
    return BeforeValidator(lambda v: _clean_text(v, limit))


Name = Annotated[str, _text(200)]
Short = Annotated[str, _text(120)]
Line = Annotated[str, _text(600)]
Number = float | int | Literal["nan", "inf", "-inf"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Stats(_Strict):
    sample: Annotated[list[Number | bool], _cut(8)] = Field(default_factory=list)
    nan: int = 0
    posinf: int = 0
    neginf: int = 0
    negzero: bool = False
    denormal: bool = False
    max_abs: Number | None = None
    min_abs: Number | None = None
    mean: Number | None = None
    min: int | None = None
    max: int | None = None
    true: int | None = None


class TensorMeta(_Strict):
    id: int = Field(ge=0)
    shape: Annotated[list[int], _cut(MAX_DIMS)] = Field(default_factory=list)
    dtype: Annotated[str, _text(40)] = ""
    device: Annotated[str, _text(40)] = ""
    requires_grad: bool = False
    stride: Annotated[list[int], _cut(MAX_DIMS)] | None = None
    contiguous: bool | None = None
    channels_last: bool | None = None
    expanded: bool = False
    layout: Short | None = None
    subclass: Short | None = None
    unreadable: Short | None = None
    stats: Stats | None = None

    @property
    def numel(self) -> int:
        count = 1
        for size in self.shape:
            count *= max(size, 0)
        return count


ArgType = Literal["tensor", "none", "bool", "int", "float", "complex", "str", "dtype", "device", "memory_format",
                  "layout", "seq", "slice", "ellipsis", "module", "callable", "other"]


class Arg(_Strict):
    type: ArgType
    value: bool | int | float | Annotated[str, _text(120)] | None = None
    tensor: TensorMeta | None = None
    items: Annotated[list[Arg], _cut(MAX_ITEMS)] | None = None
    length: int | None = None

    def tensors(self) -> list[TensorMeta]:
        """The tensors in this value, nested sequences included."""
        if self.tensor is not None:
            return [self.tensor]
        return [t for item in self.items or () for t in item.tensors()]

    def literal(self) -> str | None:
        """A scalar argument as pattern text ("2", "0.5", "True", "mean", "float16"); None for others."""
        if self.type in ("bool", "int", "float") and self.value is not None:
            return str(self.value)
        if self.type == "str" and isinstance(self.value, str):
            return self.value
        if self.type in ("dtype", "memory_format", "layout", "device") and isinstance(self.value, str):
            return self.value
        if self.type == "seq" and self.items is not None and all(i.type in ("int", "float", "bool") for i in self.items):
            return "(" + ", ".join(str(i.value) for i in self.items) + ("," if len(self.items) == 1 else "") + ")"
        return None


class Call(_Strict):
    i: int = Field(ge=0)
    name: Name
    kind: Annotated[str, _text(20)] = "function"
    ctx: Annotated[list[Annotated[str, _text(80)]], _cut(MAX_CTX)] = Field(default_factory=list)
    line: int | None = None
    caller: Short = ""
    module: Short | None = None
    args: Annotated[list[Arg], _cut(MAX_ITEMS)] = Field(default_factory=list)
    kwargs: dict[Annotated[str, _text(60)], Arg] = Field(default_factory=dict)
    arg_names: Annotated[list[Annotated[str, _text(60)]], _cut(MAX_ITEMS)] | None = None
    arg_defaults: dict[Annotated[str, _text(60)], Arg] = Field(default_factory=dict)  # a Python function's
    out: Arg | None = None
    error: Line | None = None
    inner: Annotated[list[Name], _cut(MAX_INNER)] | None = None
    emulated: Annotated[str, _text(20)] | None = None  # the device it asked for, run on the CPU instead

    def inputs(self) -> list[TensorMeta]:
        return [t for a in [*self.args, *self.kwargs.values()] for t in a.tensors()]

    def outputs(self) -> list[TensorMeta]:
        return self.out.tensors() if self.out is not None else []

    @property
    def own(self) -> bool:
        """Called by the script itself, a torch.nn module's forward or an exported program of the script's module
        (not by torch's own machinery)."""
        return self.caller in ("<script>",) or self.caller.startswith(("torch/nn/", "<eval_with_key>")) \
            or self.module is not None  # <eval_with_key>: code torch.fx generated from the script's module


class Event(_Strict):
    at: int = Field(ge=0)
    type: Annotated[str, _text(40)]
    detail: dict[Annotated[str, _text(40)], bool | int | float | Short | None | Annotated[list[Name], _cut(MAX_INNER)]] \
        = Field(default_factory=dict)


class Printed(_Strict):
    at: int = Field(ge=0)
    text: Line


class Raised(_Strict):
    type: Short
    message: Line = ""
    line: int | None = None
    in_script: bool = False
    where: Short = ""


class Recording(_Strict):
    """What ran: one record per torch call, the events around them, the printed lines, how it ended."""

    format: Literal[1]
    recorder: Annotated[str, _text(20)]
    torch: Annotated[str, _text(60)]
    status: Literal["running", "ok", "exit", "raised", "timeout"]
    emulated: Annotated[list[Annotated[str, _text(20)]], _cut(4)] = Field(default_factory=list)
    exit_code: int | None = None
    exception: Raised | None = None
    seconds: float = 0.0
    calls: Annotated[list[Call], _cut(MAX_CALLS)] = Field(default_factory=list)
    calls_total: int = 0
    calls_dropped: int = 0
    events: Annotated[list[Event], _cut(MAX_EVENTS)] = Field(default_factory=list)
    events_dropped: int = 0
    output: Annotated[list[Printed], _cut(MAX_OUTPUT)] = Field(default_factory=list)
    output_dropped: int = 0


def parse_recording(data: bytes | str) -> Recording:
    """The recording in `data`, or RecordingRejected saying why not (size, JSON, format, first schema error)."""
    if len(data) > MAX_RECORDING_BYTES:
        raise RecordingRejected(f"the recording is larger than {MAX_RECORDING_BYTES // (1024 * 1024)} MiB")
    try:
        raw = json.loads(data, parse_constant=lambda name: {"NaN": "nan", "Infinity": "inf"}.get(name, "-inf"))
    except (ValueError, RecursionError) as exc:
        raise RecordingRejected(f"the recording is not JSON: {_clean_text(str(exc), 200)}") from None
    if not isinstance(raw, dict):
        raise RecordingRejected("the recording is not a JSON object")
    if raw.get("format") != FORMAT:
        raise RecordingRejected(f"the recording has format {_clean_text(repr(raw.get('format')), 40)}, "
                                f"not {FORMAT}")
    try:
        return Recording.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise RecordingRejected(f"the recording is malformed at {_clean_text(where, 120) or 'the top'}: "
                                f"{_clean_text(first.get('msg', ''), 200)} ({exc.error_count()} error(s))") from None
