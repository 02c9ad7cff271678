"""Escape untrusted text for where it lands: terminals (control sequences, rich markup) and Markdown reports.

Issue titles, bodies, repo names and LLM answers are written by strangers (DESIGN.md, trust
boundary). Shown raw, an OSC 52 sequence writes the reader's clipboard, a "[/x]" crashes rich's
markup parser, and a title with newlines forges a heading or an @-mention in a report a
maintainer will read. Repro scripts have their own rules in fuzz_core/repro_text.py.
"""

from __future__ import annotations

import re

from rich.markup import escape as _rich_escape
from rich.text import Text

# Whole escape sequences first, so their payload (an OSC 52 clipboard text, a window title) goes too:
# CSI (ESC [ ... final byte), OSC/DCS/SOS/PM/APC strings up to BEL or ST (or the end), two-byte ESC x.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|[\x9d\x90\x98\x9e\x9f][^\x07\x1b\x9c]*[\x07\x9c]?"
    r"|\x1b.?",
    re.S,
)
# What is left: C0 and C1 controls and DEL, line/paragraph separators, bidi overrides and isolates
# (text that displays in another order than it reads), the BOM, and lone surrogates.
_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff"
_UNSAFE_KEEP_LINES = re.compile(f"[{_CONTROL}]")
_UNSAFE = re.compile(f"[{_CONTROL}\t\n]")


def strip_control(text: object, *, keep_newlines: bool = False) -> str:
    """``text`` without escape sequences or control characters; newlines and tabs kept only if asked.

    A carriage return becomes a newline when lines are kept (it would otherwise let a line
    overwrite the one before it), a space when they are not.
    """
    value = _ESCAPE_SEQUENCE.sub("", str(text)).replace("\r\n", "\n").replace("\r", "\n")
    if keep_newlines:
        return _UNSAFE_KEEP_LINES.sub("", value)
    return _UNSAFE.sub(lambda m: " " if m.group() in "\t\n" else "", value)


def one_line(text: object) -> str:
    """Control-free, on one line, runs of whitespace collapsed."""
    return " ".join(strip_control(text).split())


def markup_safe(text: object, *, keep_newlines: bool = False) -> str:
    """For interpolating data into a string that rich parses as markup."""
    return _rich_escape(strip_control(text, keep_newlines=keep_newlines))


def rich_text(text: object, *, keep_newlines: bool = False) -> Text:
    """Data as a rich Text (never parsed as markup), e.g. a table cell."""
    return Text(strip_control(text, keep_newlines=keep_newlines))


# Punctuation GitHub's Markdown acts on inside a line; each gets a backslash (CommonMark allows it
# before any ASCII punctuation). `<`, `>` and `&` become entities instead. A list marker or an
# ordered-list number at the start is escaped too ("- 1. x" would nest a list).
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#!|~])")
_LEADING_LIST_MARKER = re.compile(r"^(?:([-+])|(\d{1,9})([.)]))(?=\s|$)")
_ZERO_WIDTH_SPACE = "\u200b"


def markdown_inline(text: object, *, limit: int = 500) -> str:
    """Data as inline Markdown text: one line, punctuation escaped, HTML inert, no @-mention.

    ``@name`` becomes ``@`` + zero-width space + ``name``, which GitHub does not turn into a
    mention (and a reader still sees the name).
    """
    value = one_line(text)
    if len(value) > limit:
        value = value[:limit] + "…"
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    value = _MARKDOWN_PUNCTUATION.sub(r"\\\1", value)
    value = _LEADING_LIST_MARKER.sub(lambda m: "\\" + m[1] if m[1] else f"{m[2]}\\{m[3]}", value)
    return value.replace("@", "@" + _ZERO_WIDTH_SPACE)


def code_span(text: object, *, limit: int = 200) -> str:
    """Data as an inline code span whose delimiters the content cannot close (one line)."""
    value = one_line(text)
    if len(value) > limit:
        value = value[:limit] + "…"
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value.strip() else ""
    return f"{fence}{pad}{value}{pad}{fence}"
