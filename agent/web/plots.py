"""Evidence as pictures, drawn server-side with matplotlib to SVG.

Note [Error plot data]
The best picture is per element: |reference − fp64| and |test − fp64| for every output element,
with the positions where one side is NaN/Inf and float64 is not marked. That needs the three
output tensors, which the worker saves for a confirmed or suspicious value finding and names in the
evidence as ``outputs_path`` (fuzz_core/saved_outputs.py: safetensors, read without running code).
Findings without it (older rows, outputs too large, ``outputs_skipped`` says why) still get a
picture of what every value finding records: the two errors against fp64 and the largest
difference, next to the tolerance.
"""

from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from fuzz_core.evidence import Evidence

MAX_POINTS = 20_000
MAX_OUTPUTS_BYTES = 256 * 1024 * 1024
VERDICT_COLOURS = {
    "confirmed": "#c0392b",
    "suspicious": "#e67e22",
    "flaky": "#8e44ad",
    "passed": "#27ae60",
    "crash": "#2c3e50",
    "hang": "#7f8c8d",
    "error": "#95a5a6",
    "not_applicable": "#bdc3c7",
}


@dataclass
class ElementErrors:
    """Per-element errors against fp64 (Note [Error plot data])."""

    reference: list[float]
    test: list[float]
    nonfinite: list[int]  # element positions where reference or test is NaN/Inf and fp64 is not
    total: int  # elements in the output; the lists may hold a strided subset
    stride: int


@dataclass
class SummaryErrors:
    reference_rmse: float | None
    test_rmse: float | None
    max_abs_diff: float | None
    atol: float | None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)  # fuzz_core stores inf/nan as "inf"/"nan"
        except ValueError:
            return None
    return None


def summary_errors(evidence: Evidence | dict[str, Any]) -> SummaryErrors | None:
    ev = Evidence.of(evidence)
    tolerance = ev.tolerance_used
    found = SummaryErrors(
        reference_rmse=_number(ev.ref_error_vs_fp64),
        test_rmse=_number(ev.test_error_vs_fp64),
        max_abs_diff=_number(ev.max_abs_diff),
        atol=_number(tolerance.atol) if tolerance is not None else None,
    )
    if found.reference_rmse is None and found.test_rmse is None and found.max_abs_diff is None:
        return None
    return found


def _outputs_path(evidence: Evidence | dict[str, Any]) -> str | None:
    path = Evidence.of(evidence).outputs_path
    if not isinstance(path, str) or not os.path.isfile(path) or os.path.getsize(path) > MAX_OUTPUTS_BYTES:
        return None
    return path


def plot_kind(evidence: Evidence | dict[str, Any]) -> Literal["elements", "summary"] | None:
    """Which picture error_svg will draw, read without loading the tensors (the page's caption says which)."""
    from fuzz_core.saved_outputs import is_outputs_file

    path = _outputs_path(evidence)
    if path is not None and is_outputs_file(path):
        return "elements"
    return "summary" if summary_errors(evidence) is not None else None


def element_errors(evidence: Evidence | dict[str, Any]) -> ElementErrors | None:
    """Per-element errors from the saved outputs, or None when the finding has none readable."""
    path = _outputs_path(evidence)
    if path is None:
        return None
    import torch

    from fuzz_core.saved_outputs import load_outputs

    try:
        saved = load_outputs(path)
    except ValueError:  # not a saved-outputs file: the summary picture instead, which says so
        return None
    ref, test, fp64 = (saved[k].detach().reshape(-1).to(torch.float64) for k in ("reference", "test", "fp64"))
    if not (ref.numel() == test.numel() == fp64.numel()) or ref.numel() == 0:
        return None
    exact = torch.isfinite(fp64)
    nonfinite = ((~torch.isfinite(ref) | ~torch.isfinite(test)) & exact).nonzero().reshape(-1)
    stride = max(1, math.ceil(ref.numel() / MAX_POINTS))
    return ElementErrors(
        reference=(ref - fp64).abs()[::stride].tolist(),
        test=(test - fp64).abs()[::stride].tolist(),
        nonfinite=nonfinite[:MAX_POINTS].tolist(),
        total=ref.numel(),
        stride=stride,
    )


def _figure(width: float = 7.0, height: float = 3.2):  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    # A Figure without pyplot: no global state shared between request threads.
    return Figure(figsize=(width, height), dpi=100)


def _svg(figure: Any) -> bytes:
    out = io.BytesIO()
    figure.tight_layout()
    # svg.fonttype "path": text becomes outlines, so no string from the data reaches the SVG as text.
    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "transfuzz"}):
        figure.savefig(out, format="svg")
    return out.getvalue()


def _positive(values: list[float], floor: float) -> list[float]:
    return [v if math.isfinite(v) and v > 0 else floor for v in values]


def element_error_svg(errors: ElementErrors) -> bytes:
    figure = _figure()
    axes = figure.add_subplot()
    finite = [v for v in errors.reference + errors.test if math.isfinite(v) and v > 0]
    floor = min(finite) / 10 if finite else 1e-12
    positions = list(range(0, errors.total, errors.stride))[: len(errors.reference)]
    axes.plot(positions, _positive(errors.reference, floor), ".", markersize=3, color="#2980b9", label="|reference − fp64|")
    axes.plot(positions, _positive(errors.test, floor), ".", markersize=3, color="#c0392b", label="|test − fp64|")
    for index in errors.nonfinite:
        axes.axvline(index, color="#f39c12", alpha=0.35, linewidth=1)
    if errors.nonfinite:
        axes.plot([], [], color="#f39c12", label="NaN/Inf where fp64 is finite")
    axes.set_yscale("log")
    axes.set_xlabel("output element" + (f" (every {errors.stride}th)" if errors.stride > 1 else ""))
    axes.set_ylabel("error against fp64")
    axes.legend(loc="best", fontsize=8)
    return _svg(figure)


def summary_error_svg(errors: SummaryErrors) -> bytes:
    figure = _figure()
    axes = figure.add_subplot()
    bars = [
        ("reference rmse vs fp64", errors.reference_rmse, "#2980b9"),
        ("test rmse vs fp64", errors.test_rmse, "#c0392b"),
        ("max |test − reference|", errors.max_abs_diff, "#7f8c8d"),
    ]
    shown = [(label, value, colour) for label, value, colour in bars if value is not None]
    finite = [v for _, v, _ in shown if math.isfinite(v) and v > 0]
    floor = min(finite) / 10 if finite else 1e-12
    ceiling = max(finite) * 10 if finite else 1.0
    heights = [ceiling if math.isinf(v) or math.isnan(v) else max(v, floor) for _, v, _ in shown]
    axes.barh([label for label, _, _ in shown], heights, color=[c for _, _, c in shown])
    for y, (_, value, _) in enumerate(shown):
        axes.text(heights[y], y, f" {value:.3g}", va="center", fontsize=8)
    if errors.atol is not None and errors.atol > 0:
        axes.axvline(errors.atol, color="#000", linestyle="--", linewidth=1, label=f"atol {errors.atol:.3g}")
        axes.legend(loc="lower right", fontsize=8)
    axes.set_xscale("log")
    axes.set_xlim(floor, ceiling * 10)
    axes.set_xlabel("error (log scale); per-element outputs not saved with this finding")
    return _svg(figure)


def error_svg(evidence: Evidence | dict[str, Any]) -> bytes | None:
    """The best error picture this finding's evidence allows, or None when it records no numbers."""
    elements = element_errors(evidence)
    if elements is not None:
        return element_error_svg(elements)
    summary = summary_errors(evidence)
    return summary_error_svg(summary) if summary is not None else None


def verdict_timeline_svg(points: list[tuple[datetime, str]]) -> bytes:
    """Cumulative verdicts of one campaign against time."""
    figure = _figure(7.0, 2.8)
    axes = figure.add_subplot()
    if not points:
        axes.text(0.5, 0.5, "no verdicts yet", ha="center", va="center", transform=axes.transAxes)
        axes.set_axis_off()
        return _svg(figure)
    start = points[0][0]
    counts: dict[str, int] = {}
    series: dict[str, tuple[list[float], list[int]]] = {}
    for at, verdict in points:
        counts[verdict] = counts.get(verdict, 0) + 1
        xs, ys = series.setdefault(verdict, ([], []))
        xs.append((at - start).total_seconds())
        ys.append(counts[verdict])
    for verdict, (xs, ys) in sorted(series.items()):
        axes.step(xs, ys, where="post", label=f"{verdict} ({ys[-1]})", color=VERDICT_COLOURS.get(verdict, "#34495e"))
    axes.set_xlabel("seconds since the first verdict")
    axes.set_ylabel("verdicts")
    axes.legend(loc="upper left", fontsize=8)
    return _svg(figure)
