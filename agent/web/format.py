"""Jinja2 filters for numbers, times and JSON (their output is still autoescaped)."""

from __future__ import annotations

import json
import math
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



def value(number: Any) -> str:
    """A measured element: 6 significant digits, NaN/Inf spelled out (stored float max reads as inf)."""
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        return str(number)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number) or abs(number) >= 1.7976931348623157e308:
        return "Inf" if number > 0 else "-Inf"
    return f"{number:.6g}"


def nonfinite(number: Any) -> bool:
    return isinstance(number, float) and not math.isfinite(number)


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
        sentence += f" ({mismatch_count} of {total} elements differ)" if isinstance(total, int) else \
            f" ({mismatch_count} element{'s' if mismatch_count != 1 else ''} differ{'s' if mismatch_count == 1 else ''})"
    if verdict != "confirmed" and reason:
        sentence += f"; held back because {_reason_head(reason, 160)}"
    return sentence + "."


FILTERS = {"number": number, "when": when, "pretty_json": pretty_json, "value": value, "nonfinite": nonfinite}
