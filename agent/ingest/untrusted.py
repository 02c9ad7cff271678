"""Checks that make one decoded JSON value from a dump or from GitHub safe to store.

Note [Untrusted records]
Anyone can write an issue, and a dump file can be edited by hand, so every record is checked
on its own before it reaches the database; a record that fails is skipped with its reason and
the rest of its batch is stored. The checks, one walk over the value without recursion:
- nesting at most MAX_NESTING levels (GitHub objects nest four or five; the stored ``raw``
  column and every later ``json`` call must not meet a value that exhausts the stack);
- every string, keys included, encodable as UTF-8: a lone surrogate (``"\\ud800"`` is valid
  JSON) is rejected rather than replaced, since a record that carries one was not written by
  GitHub, and PostgreSQL and SQLite both refuse it;
- numbers finite (Python's json reads ``NaN`` and ``Infinity``, which JSON columns refuse).
NUL characters, which PostgreSQL's text and jsonb types cannot hold, are removed from every
string on both backends, so the two store the same text. Long texts are cut at a byte budget
on a character boundary (``cap_text``); records.py records what was cut in the stored ``raw``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

MAX_NESTING = 32
_SURROGATE = re.compile("[\ud800-\udfff]")


class UnsafeValue(ValueError):
    """The value cannot be stored as it is; the message names where and why."""


@dataclass
class ValueFacts:
    """What the walk learned: whether any string holds NUL, and text size per top-level key."""

    has_nul: bool = False
    chars_by_key: dict[str, int] = field(default_factory=dict)


def quoted(text: str, limit: int = 60) -> str:
    """``text`` safe to put in a reason shown on a terminal: escaped (no control or surrogate
    characters survive) and cut to ``limit`` characters."""
    cut = text[:limit]
    return ascii(cut)[1:-1] + ("..." if len(text) > limit else "")


def _where(path: tuple[Any, ...]) -> str:
    return ".".join(quoted(part) if isinstance(part, str) else str(part) for part in path) or "record"


def _check_text(text: str, path: tuple[Any, ...]) -> None:
    if not text.isascii():
        found = _SURROGATE.search(text)
        if found is not None:
            raise UnsafeValue(f"{_where(path)}: lone surrogate U+{ord(found.group()):04X} at character {found.start()} is not valid Unicode")


def inspect_value(value: Any) -> ValueFacts:
    """Walk ``value`` once (iteratively); raise UnsafeValue on the first thing we cannot store."""
    facts = ValueFacts()
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 0, ())]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, str):
            _check_text(item, path)
            facts.has_nul = facts.has_nul or "\x00" in item
            if path:
                top = str(path[0])
                facts.chars_by_key[top] = facts.chars_by_key.get(top, 0) + len(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise UnsafeValue(f"{_where(path)}: {item} is not a finite number")
        elif isinstance(item, dict | list):
            if depth >= MAX_NESTING:
                raise UnsafeValue(f"{_where(path)}: nested deeper than {MAX_NESTING} levels")
            if isinstance(item, dict):
                for key, child in item.items():
                    _check_text(key, (*path, key))
                    facts.has_nul = facts.has_nul or "\x00" in key
                    stack.append((child, depth + 1, (*path, key)))
            else:
                stack.extend((child, depth + 1, (*path, index)) for index, child in enumerate(item))
    return facts


def without_nul(value: Any) -> Any:
    """A copy of ``value`` with NUL removed from every string (depth already bounded by inspect_value)."""
    if isinstance(value, str):
        return value.replace("\x00", "") if "\x00" in value else value
    if isinstance(value, dict):
        return {without_nul(key): without_nul(child) for key, child in value.items()}
    if isinstance(value, list):
        return [without_nul(child) for child in value]
    return value


def cap_text(text: str, max_bytes: int) -> tuple[str, bool]:
    """``text`` cut to at most ``max_bytes`` of UTF-8 on a character boundary; True if cut.

    Never encodes more than ``max_bytes`` characters, so a 50 MB body costs 1 MB here, not 50.
    """
    if len(text) <= max_bytes // 4:
        return text, False  # even four bytes per character fits
    head = text[: max_bytes + 1].encode("utf-8")
    if len(head) <= max_bytes and len(text) <= max_bytes:
        return text, False
    return head[:max_bytes].decode("utf-8", errors="ignore"), True
