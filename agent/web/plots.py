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


def outputs_path_of(evidence: Evidence | dict[str, Any]) -> str | None:
    path = Evidence.of(evidence).outputs_path
    if not isinstance(path, str) or not os.path.isfile(path) or os.path.getsize(path) > MAX_OUTPUTS_BYTES:
        return None
    return path


def plot_kind(evidence: Evidence | dict[str, Any]) -> Literal["elements", "summary"] | None:
    """Which picture error_svg will draw, read without loading the tensors (the page's caption says which)."""
    from fuzz_core.saved_outputs import is_outputs_file

    path = outputs_path_of(evidence)
    if path is not None and is_outputs_file(path):
        return "elements"
    return "summary" if summary_errors(evidence) is not None else None


def element_errors(evidence: Evidence | dict[str, Any]) -> ElementErrors | None:
    """Per-element errors from the saved outputs, or None when the finding has none readable."""
    path = outputs_path_of(evidence)
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


# Note [Truthful error axes]
# A log axis has no place for 0, NaN or Inf. Drawing them at the bottom (as this page once did) makes an
# infinite test error look *closer* to float64 than the reference. Exact (0) errors sit on a band labelled
# "0" below the smallest finite error; NaN/Inf errors sit on a band labelled "NaN/Inf" above the largest,
# with their own markers and legend entries. Each group of marks carries an SVG id (gid) so a browser test
# can check where they landed.
FEW_ELEMENTS = 8  # up to this many elements: grouped bars with integer element labels, not a scatter
SIDES = (("reference", "#2980b9", "o"), ("test", "#c0392b", "s"))
NONFINITE_MARKERS = {"reference": "v", "test": "^"}


@dataclass
class ErrorScale:
    """The log axis of an error plot: where 0 and NaN/Inf go, and its tick labels (Note [Truthful error axes])."""

    zero: float
    top: float
    ticks: list[float]
    labels: list[str]

    def place(self, value: float) -> float:
        if not math.isfinite(value):
            return self.top
        return self.zero if value <= 0 else value


def error_scale(values: list[float]) -> ErrorScale:
    finite = [v for v in values if math.isfinite(v) and v > 0]
    low = math.floor(math.log10(min(finite))) if finite else -1
    high = math.ceil(math.log10(max(finite))) if finite else 1
    if high <= low:
        high = low + 1
    step = max(1, math.ceil((high - low + 1) / 7))
    decades = list(range(low, high + 1, step))
    zero, top = 10.0 ** (low - 2), 10.0 ** (high + 2)
    ticks = [zero, *(10.0**d for d in decades), top]
    labels = ["0", *(f"1e{d}" for d in decades), "NaN/Inf"]
    return ErrorScale(zero=zero, top=top, ticks=ticks, labels=labels)


def _apply_scale(axes: Any, scale: ErrorScale) -> None:
    axes.set_yscale("log")
    axes.set_ylim(scale.zero / 4, scale.top * 4)
    axes.set_yticks(scale.ticks, scale.labels)
    axes.minorticks_off()
    band = axes.axhspan(scale.top / 2.5, scale.top * 4, color="#fdebd0", zorder=0)
    band.set_gid("nonfinite-band")  # where NaN/Inf errors are drawn; a browser test checks the marks land in it
    axes.axhline(scale.top / 2.5, color="#e59866", linewidth=0.8, zorder=0)


def _legend_below(axes: Any) -> None:
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=8, frameon=False)


def _nonfinite_label(side: str, values: list[float]) -> str:
    kinds = sorted({"NaN" if math.isnan(v) else "Inf" for v in values if not math.isfinite(v)})
    return f"|{side} − fp64| is {'/'.join(kinds)} (drawn at top)"


def _mark_nonfinite(axes: Any, side: str, xs: list[float], values: list[float], scale: ErrorScale) -> None:
    at = [x for x, v in zip(xs, values) if not math.isfinite(v)]
    if at:
        (line,) = axes.plot(at, [scale.top] * len(at), NONFINITE_MARKERS[side], markersize=9, color="#d35400",
                            markeredgecolor="#000", markeredgewidth=0.6, linestyle="none",
                            label=_nonfinite_label(side, values), zorder=5)
        line.set_gid(f"nonfinite-{side}")


def _few_elements_svg(errors: ElementErrors) -> bytes:
    """Grouped bars per element: a scatter of 1-8 points reads as nothing (Note [Truthful error axes])."""
    figure = _figure(7.0, 3.6)
    axes = figure.add_subplot()
    scale = error_scale(errors.reference + errors.test)
    count = len(errors.reference)
    width = 0.38
    for offset, (side, colour, _) in zip((-width / 2, width / 2), SIDES):
        values = getattr(errors, side)
        xs = [i + offset for i in range(count)]
        finite = [(x, v) for x, v in zip(xs, values) if math.isfinite(v)]
        if finite:
            bars = axes.bar([x for x, _ in finite], [scale.place(v) for _, v in finite], width, bottom=scale.zero / 4,
                            color=colour, label=f"|{side} − fp64|")
            for bar in bars:
                bar.set_gid(f"finite-{side}")
            for x, v in finite:
                axes.text(x, scale.place(v) * 1.3, f"{v:.2g}", ha="center", va="bottom", fontsize=7)
        _mark_nonfinite(axes, side, xs, values, scale)
    _apply_scale(axes, scale)
    axes.set_xticks(range(count), [str(i) for i in range(count)])
    axes.set_xlim(-0.7, count - 0.3)
    axes.set_xlabel("output element (flattened index)")
    axes.set_ylabel("error against fp64")
    _legend_below(axes)
    return _svg(figure)


def element_error_svg(errors: ElementErrors) -> bytes:
    if errors.total <= FEW_ELEMENTS and errors.stride == 1:
        return _few_elements_svg(errors)
    from matplotlib.ticker import MaxNLocator

    figure = _figure(7.0, 3.6)
    axes = figure.add_subplot()
    scale = error_scale(errors.reference + errors.test)
    positions = list(range(0, errors.total, errors.stride))[: len(errors.reference)]
    for side, colour, marker in SIDES:
        values = getattr(errors, side)
        finite = [(x, v) for x, v in zip(positions, values) if math.isfinite(v)]
        if finite:
            (line,) = axes.plot([x for x, _ in finite], [scale.place(v) for _, v in finite], marker, markersize=2.5,
                                color=colour, linestyle="none", label=f"|{side} − fp64|")
            line.set_gid(f"finite-{side}")
        _mark_nonfinite(axes, side, positions, values, scale)
    unsampled = sorted(set(errors.nonfinite) - set(positions))
    if unsampled:  # NaN/Inf between the plotted (strided) elements still shows
        (line,) = axes.plot(unsampled, [scale.top] * len(unsampled), "|", markersize=10, color="#d35400",
                            linestyle="none", label="NaN/Inf between plotted elements")
        line.set_gid("nonfinite-unsampled")
    _apply_scale(axes, scale)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("output element (flattened index)" + (f", every {errors.stride}th" if errors.stride > 1 else ""))
    axes.set_ylabel("error against fp64")
    _legend_below(axes)
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
    bars = axes.barh([label for label, _, _ in shown], heights, color=[c for _, _, c in shown])
    for bar, (_, value, _) in zip(bars, shown):
        if not math.isfinite(value):  # NaN/Inf: the longest bar, hatched and labelled, never a short one
            bar.set_hatch("//")
            bar.set_edgecolor("#d35400")
            bar.set_gid("nonfinite-summary")
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


def _time_unit(span_s: float) -> tuple[float, str]:
    if span_s >= 2 * 3600:
        return 3600.0, "hours"
    if span_s >= 120:
        return 60.0, "minutes"
    return 1.0, "seconds"


def verdict_timeline_svg(points: list[tuple[datetime, str]], *, start: datetime | None = None,
                         end: datetime | None = None) -> bytes:
    """A campaign's verdicts: cumulative counts per verdict from the campaign's start to its end (or the last
    verdict), beside the totals as labelled bars, so a campaign whose verdicts all land at the end still reads."""
    from matplotlib.ticker import MaxNLocator

    figure = _figure(7.0, 2.8)
    if not points:
        axes = figure.add_subplot()
        axes.text(0.5, 0.5, "no verdicts yet", ha="center", va="center", transform=axes.transAxes)
        axes.set_axis_off()
        return _svg(figure)
    grid = figure.add_gridspec(1, 2, width_ratios=(3, 2))
    over_time, totals = figure.add_subplot(grid[0]), figure.add_subplot(grid[1])
    origin = min(start or points[0][0], points[0][0])
    last = max(end or points[-1][0], points[-1][0])
    unit, unit_name = _time_unit((last - origin).total_seconds())
    counts: dict[str, int] = {}
    series: dict[str, tuple[list[float], list[int]]] = {}
    for at, verdict in points:
        counts[verdict] = counts.get(verdict, 0) + 1
        xs, ys = series.setdefault(verdict, ([0.0], [0]))
        xs.append((at - origin).total_seconds() / unit)
        ys.append(counts[verdict])
    stop = (last - origin).total_seconds() / unit
    order = sorted(series, key=lambda v: -counts[v])
    for verdict in order:
        xs, ys = series[verdict]
        axes_line = over_time.step([*xs, stop], [*ys, ys[-1]], where="post", linewidth=1.6,
                                   color=VERDICT_COLOURS.get(verdict, "#34495e"))
        axes_line[0].set_gid(f"timeline-{verdict}")
    over_time.set_xlim(0, max(stop, 1e-9) * 1.02)
    over_time.set_ylim(0, max(counts.values()) * 1.1 + 0.5)
    over_time.yaxis.set_major_locator(MaxNLocator(integer=True))
    over_time.set_xlabel(f"{unit_name} since the campaign started")
    over_time.set_ylabel("verdicts so far")
    totals.barh(order[::-1], [counts[v] for v in order[::-1]],
                color=[VERDICT_COLOURS.get(v, "#34495e") for v in order[::-1]])
    for y, verdict in enumerate(order[::-1]):
        totals.text(counts[verdict], y, f" {counts[verdict]}", va="center", fontsize=8)
    totals.set_xlim(0, max(counts.values()) * 1.25 + 0.5)
    totals.xaxis.set_major_locator(MaxNLocator(integer=True))
    totals.set_xlabel("verdicts in total")
    totals.tick_params(axis="y", labelsize=8)
    return _svg(figure)
