"""Put untrusted text and values into repro scripts inertly: free text only as `#` comment lines, values only as literals.

Note [Inert repros]: a repro script is read and run by maintainers, and what it says comes partly
from issue authors and LLMs (API names, reasons, parameter values). So the template is ours alone;
free text lands only in `#` comments, one line each, with every character that could end a
comment line or hide text (C0/C1 controls, line and paragraph separators, bidi overrides)
removed; values are written only as Python literals built here from typed data; names are
written only when they are dotted identifiers. agent/text_safety.py does the same job for
Markdown and terminals.
"""

from __future__ import annotations

import math
import re
import textwrap
from typing import Any

import torch

# C0 and C1 controls, DEL, Unicode line/paragraph separators, bidi embeddings/overrides/isolates,
# the BOM, and lone surrogates (which cannot even be written as UTF-8).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def one_line(text: str) -> str:
    """``text`` on one line: every unsafe character becomes a space, runs of spaces collapse."""
    return " ".join(_UNSAFE.sub(" ", str(text)).split())


def comment_lines(text: str, *, prefix: str = "", width: int = 100, limit: int = 2000) -> list[str]:
    """``text`` as ``# ...`` lines (wrapped, at most ``limit`` characters kept); never anything but comments."""
    flat = one_line(text)
    if len(flat) > limit:
        flat = flat[:limit] + " [cut]"
    wrapped = textwrap.wrap(prefix + flat, width=width, break_long_words=True, break_on_hyphens=False) or [prefix]
    return [f"# {line}".rstrip() for line in wrapped]


def is_dotted_name(name: str) -> bool:
    return bool(_DOTTED_NAME.fullmatch(name))


def checked_name(name: str) -> str:
    """``name`` when it may be written into code as an attribute path; ValueError otherwise."""
    if not is_dotted_name(name):
        raise ValueError(f"not a dotted Python name, refusing to write it into a repro: {one_line(name)[:80]!r}")
    return name


def literal_source(value: Any) -> str:
    """Python source for a literal value (None, bool, int, float, complex, str, bytes, tuple, list,
    dict, torch.dtype); ValueError for anything else, so no object's own repr reaches a script."""
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({repr(value)!r})"
    if isinstance(value, complex):
        return f"complex({literal_source(value.real)}, {literal_source(value.imag)})"
    if isinstance(value, torch.dtype):
        return checked_name(str(value))
    if isinstance(value, tuple):
        items = [literal_source(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(literal_source(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal_source(k)}: {literal_source(v)}" for k, v in value.items()) + "}"
    raise ValueError(f"{type(value).__name__} is not a literal a repro can hold")
