"""Jinja2 filters for numbers, times and JSON (their output is still autoescaped)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any


def number(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "-" if value is None else str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def when(value: datetime | None) -> str:
    return "-" if value is None else value.strftime("%Y-%m-%d %H:%M:%S %Z").strip()


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, default=str, ensure_ascii=False)



NONFINITE_WORDS = {"nan": "NaN", "inf": "Inf", "+inf": "Inf", "-inf": "-Inf", "infinity": "Inf", "-infinity": "-Inf"}


def value(number: Any) -> str:
    """A measured element: 6 significant digits, NaN/Inf spelled out (stored float max reads as inf; fuzz_core
    stores non-finite numbers in JSON as the strings "nan"/"inf"/"-inf")."""
    if isinstance(number, str) and number.strip().lower() in NONFINITE_WORDS:
        return NONFINITE_WORDS[number.strip().lower()]
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        return str(number)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number) or abs(number) >= 1.7976931348623157e308:
        return "Inf" if number > 0 else "-Inf"
    return f"{number:.6g}"


def nonfinite(number: Any) -> bool:
    if isinstance(number, str):
        return number.strip().lower() in NONFINITE_WORDS
    return isinstance(number, float) and (not math.isfinite(number) or abs(number) >= 1.7976931348623157e308)


VERDICT_WORDS = {
    "confirmed": "Confirmed bug",
    "suspicious": "Suspicious, not confirmed",
    "flaky": "Flaky",
    "passed": "Passed",
    "crash": "Crash",
    "hang": "Hang",
    "error": "Harness error",
    "not_applicable": "Not applicable",
}


def _reason_head(reason: str, limit: int = 220) -> str:
    head = " ".join(reason.split())
    for stop in ("; ", ". "):
        if stop in head:
            head = head.split(stop, 1)[0]
    return head if len(head) <= limit else head[: limit - 1].rstrip() + "…"


def verdict_sentence(verdict: str, api: str, table: Any, mismatch_count: Any, total: Any, reason: str) -> str:
    """The finding in one sentence: what the test mode gives where the reference and float64 agree, or the reason."""
    words = VERDICT_WORDS.get(verdict, verdict)
    rows = getattr(table, "rows", None) or []
    if verdict not in ("confirmed", "suspicious", "flaky") or not rows:
        return f"{words}: {_reason_head(reason) or 'no reason recorded'}."
    worst = rows[0]
    sentence = (f"{words}: {api} under {table.test_mode} gives {value(worst.test)} where {table.reference_mode} gives "
                f"{value(worst.reference)} and float64 gives {value(worst.float64)}")
    if isinstance(mismatch_count, int) and not isinstance(mismatch_count, bool):
        sentence += (f" ({mismatch_count} of {total} element{'s' if total != 1 else ''} "
                     f"differ{'s' if mismatch_count == 1 else ''})") if isinstance(total, int) else \
            f" ({mismatch_count} element{'s' if mismatch_count != 1 else ''} differ{'s' if mismatch_count == 1 else ''})"
    if verdict != "confirmed" and reason:
        sentence += f"; held back because {_reason_head(reason, 160)}"
    return sentence + "."


FILTERS = {"number": number, "when": when, "pretty_json": pretty_json, "value": value, "nonfinite": nonfinite}


@dataclass
class InputRow:
    """One argument of the failing input as the finding page shows it."""

    name: str
    kind: str  # "float32 [2, 8]", or "literal"
    values: list[str] | None  # every element (flattened), when the tensor is small
    summary: str | None  # for a large tensor, or one whose values were not saved
    nonfinite: bool  # any NaN/Inf in it (marked on the page: NaN/Inf inputs make many bugs)


def _shape(shape: Any) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]" if isinstance(shape, list) else "[?]"


def input_rows(inputs: list[Any], described: Any = None) -> list[InputRow]:
    """The saved input's arguments (agent.review.values.read_inputs), or, when none could be read, the shapes
    and dtypes the evidence describes (an InputDescription), marked as such."""
    rows: list[InputRow] = []
    for item in inputs:
        if isinstance(item, dict):
            rows.append(InputRow(name=str(item.get("name", "?")), kind="literal", values=[str(item.get("value"))],
                                 summary=None, nonfinite=False))
            continue
        kind = f"{item.dtype} {_shape(item.shape)}"
        bad = bool(item.nan or item.inf)
        if item.values is not None:
            rows.append(InputRow(name=item.name, kind=kind, values=[value(v) for v in item.values], summary=None,
                                 nonfinite=bad))
        else:
            count = math.prod(item.shape) if item.shape else 1
            head = ", ".join(value(v) for v in item.first or [])
            rows.append(InputRow(
                name=item.name, kind=kind, values=None, nonfinite=bad,
                summary=(f"{count} elements: min {value(item.min)}, max {value(item.max)}, {item.nan} NaN, "
                         f"{item.inf} Inf; first {len(item.first or [])}: {head}")))
    if rows or described is None:
        return rows
    for i, tensor in enumerate(getattr(described, "tensors", None) or []):
        if tensor is None:
            continue
        dtype = str(tensor.dtype or "?").removeprefix("torch.")
        layout = "" if tensor.contiguous in (None, True) else f", strides {_shape(tensor.stride)} (not contiguous)"
        rows.append(InputRow(name=f"tensor {i}", kind=f"{dtype} {_shape(tensor.shape)}", values=None,
                             summary=f"values not saved with this finding{layout}", nonfinite=False))
    return rows
