"""Jinja2 filters for numbers, times and JSON (their output is still autoescaped)."""

from __future__ import annotations

import json
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


FILTERS = {"number": number, "when": when, "pretty_json": pretty_json}
