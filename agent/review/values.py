"""The values behind a finding, for `review show`: the failing input, and both modes' outputs next to float64.

Inputs are read from the finding's .safetensors file (fuzz_core/saved_inputs.py: raw tensor bytes plus
a JSON call tree; nothing in it is code, so reading it here runs nothing from an issue). Outputs are
never recomputed in this process: they are the figures the fuzz core measured inside its sandboxed
worker on the minimised input (the typed Evidence's minimised.figures), the same input and values the short
repro prints. When a finding has no such figures (only confirmed findings are minimised), we say so
and name the repro that prints them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent.cli.json_out import Measure
from agent.review.replay import Replay, replay_lines
from fuzz_core.evidence import Evidence, Minimised

MAX_INPUTS_BYTES = 64 * 1024 * 1024
FULL_LIMIT = 32  # tensors with at most this many elements are printed whole
HEAD = 8


class TensorValues(BaseModel):
    name: str
    dtype: str
    shape: list[int]
    values: list[Measure] | None = None  # every element (flattened), when small
    first: list[Measure] | None = None  # the first elements, when large
    min: Measure = None  # of the finite elements
    max: Measure = None
    nan: int = 0
    inf: int = 0  # +inf and -inf


class ModeOutputs(BaseModel):
    output: str
    reference_mode: str
    test_mode: str
    output_dtype: str | None = None
    reference_values: list[Measure]
    test_values: list[Measure]
    float64_values: list[Measure]
    reference_error_vs_fp64: Measure = None
    test_error_vs_fp64: Measure = None


class FindingValues(BaseModel):
    inputs_path: str | None
    input_kind: str  # "minimised" (what the figures ran on) or "original"
    inputs: list[TensorValues | dict[str, Any]]
    outputs: ModeOutputs | None
    missing: list[str]  # why something is not shown
    replay: Replay | None = None  # `review show --replay`: worst elements recomputed in the sandbox


def _number(value: float) -> Any:
    return value if math.isfinite(value) else ("nan" if math.isnan(value) else ("inf" if value > 0 else "-inf"))


def tensor_values(name: str, tensor: Any) -> TensorValues:
    import torch

    t = tensor.detach()
    shape = list(t.shape)
    dtype = str(t.dtype).removeprefix("torch.")
    flat = t.reshape(-1)
    if t.is_complex():
        flat = torch.view_as_real(flat).reshape(-1)
    as_float = flat.double() if flat.dtype != torch.bool else flat.to(torch.float64)
    view = TensorValues(name=name, dtype=dtype, shape=shape)
    # Counted for every tensor, shown whole or not: `inf` counts +inf and -inf alike.
    view.nan = int(torch.isnan(as_float).sum())
    view.inf = int(torch.isinf(as_float).sum())
    finite = as_float[torch.isfinite(as_float)]
    if finite.numel():
        view.min, view.max = float(finite.min()), float(finite.max())
    if flat.numel() <= FULL_LIMIT:
        view.values = [_number(v) for v in as_float.tolist()]
    else:
        view.first = [_number(v) for v in as_float[:HEAD].tolist()]
    return view


def _leaves(tree: Any, name: str) -> list[tuple[str, Any]]:
    import torch

    if isinstance(tree, torch.Tensor):
        return [(name, tree)]
    if isinstance(tree, (list, tuple)):
        return [leaf for i, item in enumerate(tree) for leaf in _leaves(item, f"{name}[{i}]")]
    if isinstance(tree, dict):
        return [leaf for key, item in tree.items() for leaf in _leaves(item, f"{name}.{key}" if name else str(key))]
    return [(name, tree)]


def read_inputs(path: str) -> list[TensorValues | dict[str, Any]]:
    """Every argument of the saved call: tensors as TensorValues, other literals as {"name", "value"}."""
    import torch

    from fuzz_core.saved_inputs import load_inputs

    data = load_inputs(path)
    out: list[TensorValues | dict[str, Any]] = []
    leaves = [leaf for i, arg in enumerate(data["args"]) for leaf in _leaves(arg, f"arg{i}")]
    leaves += [leaf for key, arg in data["kwargs"].items() for leaf in _leaves(arg, key)]
    for name, value in leaves:
        if isinstance(value, torch.Tensor):
            out.append(tensor_values(name, value))
        else:
            out.append({"name": name, "value": repr(value)})
    return out


def finding_values(evidence: Evidence | dict[str, Any]) -> FindingValues:
    """The input (minimised when the figures are from it) and the measured outputs; reasons for what is missing."""
    ev = Evidence.of(evidence)
    minimised = ev.minimised or Minimised()
    figures = minimised.figures
    missing: list[str] = []
    outputs = None
    if figures is not None and figures.reference_values is not None:
        outputs = ModeOutputs.model_validate(figures.to_dict())
    elif figures is not None and figures.figures_skipped:
        missing.append(f"outputs not measured: {figures.figures_skipped}")
    else:
        missing.append("outputs not stored for this finding (the fuzz core measures them when it minimises a "
                       "confirmed finding); --replay recomputes them in the sandbox")
    path, kind = (minimised.inputs_path, "minimised") if outputs is not None else (ev.inputs_path, "original")
    if ev.adopted_minimised and path == minimised.inputs_path:
        kind = "minimised"  # adopted as the finding's one input (Note [One input per finding] in fuzz_core)
    inputs: list[TensorValues | dict[str, Any]] = []
    if not path:
        missing.append("no saved input")
    elif not Path(path).is_file():
        missing.append(f"input file {path} is gone (artifacts folder moved or cleaned?)")
    elif Path(path).stat().st_size > MAX_INPUTS_BYTES:
        missing.append(f"input file {path} is larger than {MAX_INPUTS_BYTES // 2**20} MiB; not read")
    else:
        try:
            inputs = read_inputs(path)
        except Exception as exc:  # a damaged file is reported, never fatal to `review show`
            missing.append(f"input file {path} unreadable: {type(exc).__name__}: {exc}")
    return FindingValues(inputs_path=path, input_kind=kind, inputs=inputs, outputs=outputs, missing=missing)


def _shown(value: Any) -> str:
    if isinstance(value, float):
        if value >= 1.7976931348623157e308:  # float max stands for an infinite distance in stored figures
            return "inf"
        return f"{value:.6g}"
    return str(value)


def _row(values: list[Any]) -> str:
    return "[" + ", ".join(_shown(v) for v in values) + "]"


def value_lines(values: FindingValues) -> list[str]:
    """The text `review show` prints under "Values:" (callers strip control characters)."""
    lines: list[str] = []
    where = ("the minimised input, which the short repro runs" if values.input_kind == "minimised"
             else "the failing input the fuzzer saved")
    if values.inputs:
        lines.append(f"  input ({where}):")
    for item in values.inputs:
        if isinstance(item, TensorValues):
            head = f"{item.dtype}{item.shape}"
            if item.values is not None:
                shown = _shown(item.values[0]) if not item.shape else _row(item.values)
                lines.append(f"    {item.name}: {head} = {shown}")
            else:
                count = math.prod(item.shape)
                lines.append(f"    {item.name}: {head} ({count} elements) min {_shown(item.min)}, max {_shown(item.max)}, "
                             f"{item.nan} nan, {item.inf} inf; first {len(item.first or [])}: {_row(item.first or [])}")
        else:
            lines.append(f"    {item['name']}: {item['value']}")
    out = values.outputs
    if out is not None:
        label = max(len(out.reference_mode), len(out.test_mode), len("float64"))
        lines.append(f"  output {out.output} ({out.output_dtype or '?'}), first elements:")
        for mode, shown in ((out.reference_mode, out.reference_values), (out.test_mode, out.test_values),
                            ("float64", out.float64_values)):
            lines.append(f"    {mode.ljust(label)}  {_row(shown)}")
        if out.reference_error_vs_fp64 is not None or out.test_error_vs_fp64 is not None:
            lines.append(f"    largest distance from float64: {out.reference_mode} {_shown(out.reference_error_vs_fp64)}, "
                         f"{out.test_mode} {_shown(out.test_error_vs_fp64)}")
    if values.replay is not None:
        lines += replay_lines(values.replay)
    else:
        lines += [f"  ({reason})" for reason in values.missing]
    return lines
