"""What `--json` prints: versioned pydantic documents, and one spelling for numbers JSON cannot hold.

Note [Non-finite numbers in --json]: JSON has no inf or nan. Every `--json` document writes a
finite number as a JSON number, a non-finite one as one of the strings "inf", "-inf", "nan"
(the spelling fuzz_core stores in evidence), and a value that was never measured as null. No
other spelling ("Infinity", "NaN" tokens, 1e309) is ever printed: emit() refuses them.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field

# Bump when a field is removed or changes meaning; adding a field keeps the version.
SCHEMA_VERSION = 1

NonFinite = Literal["inf", "-inf", "nan"]
_NON_FINITE_SPELLINGS = {"inf": "inf", "+inf": "inf", "infinity": "inf", "-inf": "-inf", "-infinity": "-inf",
                         "nan": "nan", "-nan": "nan"}


def canonical_number(value: Any) -> Any:
    """A float stays a float when finite; inf/nan in any spelling become "inf", "-inf" or "nan"."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        number = float(value)
        if math.isfinite(number):
            return value
        return "nan" if math.isnan(number) else ("inf" if number > 0 else "-inf")
    if isinstance(value, str) and value.strip().lower() in _NON_FINITE_SPELLINGS:
        return _NON_FINITE_SPELLINGS[value.strip().lower()]
    return value


def _measure(value: Any) -> Any:
    """canonical_number, and text that is no number at all (a stored "n/a") is "not measured"."""
    value = canonical_number(value)
    if isinstance(value, str) and value not in ("inf", "-inf", "nan"):
        try:
            return canonical_number(float(value))
        except ValueError:
            return None
    return value


Measure = Annotated[
    float | NonFinite | None,
    BeforeValidator(_measure),
    Field(description='A number; "inf", "-inf" or "nan" when not finite; null when not measured.'),
]


def json_ready(value: Any) -> Any:
    """The same tree with every non-finite float spelled as Note [Non-finite numbers in --json] says."""
    if isinstance(value, float):
        return canonical_number(value)
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(item) for item in value]
    return value


class Versioned(BaseModel):
    """Base of every `--json` document: consumers check schema_version before reading the rest."""

    schema_version: int = SCHEMA_VERSION


def format_measure(value: Any) -> str:
    """A Measure for a table cell: 3 significant digits, the non-finite spellings as they are, '-' when absent."""
    value = canonical_number(value)
    if value is None:
        return "-"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.3g}"
    return str(value) if value in ("inf", "-inf", "nan") else "-"
