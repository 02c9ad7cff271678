"""Budgets on the command line: `90s`, `10m`, `1h`, `1h30m` of time or `2000x` executions."""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)([smh])")


@dataclass(frozen=True)
class Budget:
    seconds: float | None = None
    executions: int | None = None


def parse_budget(text: str) -> Budget:
    """Parse a budget; raises ValueError with the accepted forms on anything else."""
    value = text.strip().lower()
    if re.fullmatch(r"\d+x", value):
        count = int(value[:-1])
        if count <= 0:
            raise ValueError(f"budget {text!r}: executions must be positive")
        return Budget(executions=count)
    if re.fullmatch(r"\d+(?:\.\d+)?", value):
        value += "s"
    parts = _PART.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        raise ValueError(f"budget {text!r}: use a duration like 90s, 10m, 1h30m or executions like 2000x")
    seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise ValueError(f"budget {text!r}: must be positive")
    return Budget(seconds=seconds)
