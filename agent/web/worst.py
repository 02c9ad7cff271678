"""Both modes against float64 at the elements where they disagree most, for the finding page's values table.

The numbers come from what the fuzz core stored, never from running anything here: the saved outputs file
(reference, test and float64 at the differing output, fuzz_core/saved_outputs.py; safetensors, no code) when
the finding has one, else the first elements measured on the minimised input (evidence minimised.figures).
The table says which of the two it shows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fuzz_core.evidence import Evidence

WORST_ROWS = 8


@dataclass
class ValueRow:
    index: str  # "[1, 3]" for a saved output of shape (2, 4); "3" for a flattened figure
    reference: float
    test: float
    float64: float

    @property
    def reference_error(self) -> float:
        return abs(self.reference - self.float64)

    @property
    def test_error(self) -> float:
        return abs(self.test - self.float64)


@dataclass
class ValueTable:
    reference_mode: str
    test_mode: str
    rows: list[ValueRow]
    basis: str  # what the rows are, in words
    total: int | None  # elements in the output, when known
    output_dtype: str | None = None


def _float(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value)  # "inf"/"nan" as fuzz_core stores them
    except (TypeError, ValueError):
        return math.nan


def _index(flat: int, shape: list[int]) -> str:
    if len(shape) <= 1:
        return str(flat)
    parts = []
    for size in reversed(shape):
        parts.append(flat % size if size else 0)
        flat //= size if size else 1
    return "[" + ", ".join(str(p) for p in reversed(parts)) + "]"


def _mismatch(reference: float, test: float) -> float:
    """How far apart the modes are at one element: NaN on one side only, or Inf against finite, is the worst."""
    if math.isnan(reference) and math.isnan(test):
        return -1.0
    if math.isnan(reference) or math.isnan(test):
        return math.inf
    if reference == test:
        return 0.0
    return abs(test - reference) if math.isfinite(test - reference) else math.inf


def from_saved_outputs(path: str, reference_mode: str, test_mode: str, limit: int = WORST_ROWS) -> ValueTable | None:
    from agent.web.plots import outputs_path_of

    if outputs_path_of({"outputs_path": path}) is None:
        return None
    import torch

    from fuzz_core.saved_outputs import load_outputs

    try:
        saved = load_outputs(path)
    except ValueError:
        return None
    shape = list(saved["fp64"].shape)
    ref, test, fp64 = (saved[k].detach().reshape(-1).to(torch.float64) for k in ("reference", "test", "fp64"))
    if not (ref.numel() == test.numel() == fp64.numel()) or ref.numel() == 0:
        return None
    both_nan = torch.isnan(ref) & torch.isnan(test)
    one_nan = torch.isnan(ref) ^ torch.isnan(test)
    gap = (test - ref).abs()
    gap = torch.where(torch.isnan(gap) | one_nan, torch.full_like(gap, math.inf), gap)
    gap = torch.where(both_nan | (ref == test), torch.zeros_like(gap), gap)
    count = min(limit, ref.numel())
    order = torch.topk(gap, count).indices.tolist() if count else []
    rows = [ValueRow(index=_index(i, shape), reference=float(ref[i]), test=float(test[i]), float64=float(fp64[i]))
            for i in order]
    basis = (f"the {count} elements where the modes differ most" if ref.numel() > count
             else "the output's one element" if count == 1 else f"all {count} elements of the output")
    return ValueTable(reference_mode=reference_mode, test_mode=test_mode, rows=rows, basis=basis, total=ref.numel(),
                      output_dtype=str(saved["test"].dtype).removeprefix("torch."))


def value_table(evidence: Evidence | dict[str, Any], reference_mode: str, test_mode: str) -> ValueTable | None:
    """The finding's values table, or None when it stored no per-element numbers."""
    ev = Evidence.of(evidence)
    if isinstance(ev.outputs_path, str):
        table = from_saved_outputs(ev.outputs_path, reference_mode, test_mode)
        if table is not None:
            return table
    figures = ev.minimised.figures if ev.minimised is not None else None
    if figures is None or figures.reference_values is None or figures.test_values is None:
        return None
    fp64 = figures.float64_values or []
    rows = [ValueRow(index=str(i), reference=_float(r), test=_float(t), float64=_float(fp64[i]) if i < len(fp64) else math.nan)
            for i, (r, t) in enumerate(zip(figures.reference_values, figures.test_values))]
    rows.sort(key=lambda row: -_mismatch(row.reference, row.test))
    return ValueTable(reference_mode=figures.reference_mode or reference_mode, test_mode=figures.test_mode or test_mode,
                      rows=rows, basis=f"the first {len(rows)} elements on the minimised input, largest difference first",
                      total=None, output_dtype=figures.output_dtype)
