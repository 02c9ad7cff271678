"""Tables that fit the reader's terminal: the output console, and API names shortened without losing identity."""

from __future__ import annotations

import os
import sys

from rich.console import Console

DEFAULT_PIPED_WIDTH = 80


def output_width() -> int:
    """The width tables are laid out for: COLUMNS when set (terminal or pipe), else the terminal's, else 80."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) >= 20:
        return int(columns)
    if sys.stdout.isatty():
        try:
            return os.get_terminal_size(sys.stdout.fileno()).columns
        except OSError:
            pass
    return DEFAULT_PIPED_WIDTH


def output_console() -> Console:
    """stdout console at output_width(); colour only on a terminal."""
    return Console(width=output_width(), soft_wrap=False)


def _shorten(name: str, width: int) -> str:
    """``name`` cut from the left to at most ``width`` characters, starting after a dot when one is in reach."""
    if len(name) <= width:
        return name
    tail = name[len(name) - (width - 1):]
    dot = tail.find(".")
    if 0 <= dot < len(tail) - 1 and dot < len(tail) // 2:
        tail = tail[dot + 1:]
    return "…" + tail


def short_names(names: list[str], width: int) -> list[str]:
    """Each name shortened from the left to ``width``; distinct names never become the same string.

    Where two names would collide (torch.nn.functional.layer_norm vs torch.layer_norm at a small width),
    both keep more characters until they differ, even past ``width``: identity beats alignment.
    """
    width = max(width, 4)
    widths = {name: width for name in names}
    while True:
        shown = {name: _shorten(name, widths[name]) for name in widths}
        by_text: dict[str, list[str]] = {}
        for name, text in shown.items():
            by_text.setdefault(text, []).append(name)
        clashes = [group for group in by_text.values() if len(group) > 1]
        if not clashes:
            return [shown[name] for name in names]
        for group in clashes:
            for name in group:
                widths[name] += 1
