"""Stream the records of a dump file (JSON array or JSON Lines) without loading it whole.

Note [Streaming a JSON array with recovery]
A JSON array is read in chunks; each element is decoded with ``json.JSONDecoder.raw_decode``
(C speed). When decoding fails, a small structural scanner (strings and bracket depth, driven
by regular expressions) finds where the element ends: if the end lies past the buffer, the
element was only cut by the chunk boundary and more text is read; if the end is inside the
buffer, the element itself is malformed, so it is reported (record number, line, reason) and
skipped, and the next element is decoded as usual. A file that ends inside an element yields
one "truncated" problem. Memory is bounded by the chunk size plus the largest single record:
once a record larger than a chunk is decoded, the buffer drops its text before the record is
handed on, so a huge body is not held twice. A record nested too deeply for the C decoder
(RecursionError) is a problem of that record, found by the same iterative scanner.

Note [Dump encoding]
The bytes are checked against the encoding (UTF-8 unless the caller names another codec)
before the first record is read, so an undecodable file is refused with the byte offset of
the first bad byte and nothing is written; it is never decoded with replacement characters.
"""

from __future__ import annotations

import codecs
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

CHUNK_BYTES = 1 << 20
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_STRUCTURE = re.compile(r'[\[\]{}"]')
# unrolled (``[^"\\]*`` runs without a backtracking frame per character): a 50 MB string is one scan
_STRING_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SCALAR_END = re.compile(r"[,\]]")
_decoder = json.JSONDecoder()


DEFAULT_ENCODING = "utf-8"
_NESTING_ERROR = "invalid JSON: nested too deeply to decode"


class DumpFormatError(ValueError):
    """The file is neither a JSON array nor JSON Lines."""


class DumpEncodingError(DumpFormatError):
    """The file's bytes are not text in the expected encoding; see Note [Dump encoding]."""


def check_encoding(path: Path, encoding: str = DEFAULT_ENCODING, chunk_bytes: int = CHUNK_BYTES) -> None:
    """Raise DumpEncodingError naming the first byte that ``encoding`` cannot decode (or an unknown codec)."""
    try:
        decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    except LookupError:
        raise DumpEncodingError(f"unknown encoding {encoding!r}") from None
    consumed = 0
    lines = 1
    with path.open("rb") as fh:
        while True:
            data = fh.read(chunk_bytes)
            pending = len(decoder.getstate()[0])
            try:
                lines += decoder.decode(data, final=not data).count("\n")
            except UnicodeDecodeError as exc:
                offset = consumed - pending + exc.start
                lines += exc.object[: exc.start].count(b"\n")
                raise DumpEncodingError(
                    f"{path}: not {encoding} text at byte offset {offset} (line {lines}): {exc.reason}; "
                    "name the file's encoding (e.g. --encoding latin-1) to read it"
                ) from None
            if not data:
                return
            consumed += len(data)


@dataclass(frozen=True)
class DumpRecord:
    """One element of the dump: its value, or why it could not be decoded."""

    index: int  # 1-based position among the dump's records
    line: int  # 1-based line where the record starts
    value: Any = None
    error: str | None = None

    @property
    def position(self) -> str:
        return f"record {self.index} (line {self.line})"


def detect_format(path: Path, encoding: str = DEFAULT_ENCODING) -> str:
    """'array', 'lines' or 'empty', from the first non-blank character."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    with path.open("rb") as fh:
        head = ""
        while not head.lstrip("\ufeff \t\r\n"):
            more = fh.read(4096)
            head = decoder.decode(more, final=not more)
            if not more and not head.lstrip("\ufeff \t\r\n"):
                return "empty"
    first = head.lstrip("\ufeff \t\r\n")[:1]
    if first == "[":
        return "array"
    if first == "{":
        return "lines"
    raise DumpFormatError(f"{path}: not a JSON array or JSON Lines of issues (starts with {first!r})")


def iter_dump(
    path: Path,
    *,
    on_bytes: Callable[[int], None] | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    encoding: str = DEFAULT_ENCODING,
) -> Iterator[DumpRecord]:
    """Yield every record of the dump in order; malformed ones carry ``error`` instead of ``value``.

    Raises DumpEncodingError before the first record when the bytes are not ``encoding`` text.
    """
    check_encoding(path, encoding)
    kind = detect_format(path, encoding)
    if kind == "empty":
        return
    with path.open("rb") as fh:
        if kind == "lines":
            yield from _iter_lines(fh, on_bytes, encoding)
        else:
            yield from _ArrayReader(fh, on_bytes, chunk_bytes, encoding).records()


def _text_lines(fh: BinaryIO, encoding: str) -> Iterator[tuple[str, int]]:
    """(line, its size in bytes); split on the byte b"\\n" when the codec keeps it a single byte."""
    if "\n".encode(encoding) == b"\n" and "[{".encode(encoding) == b"[{":
        for raw in fh:
            yield raw.decode(encoding), len(raw)
        return
    for line in io.TextIOWrapper(fh, encoding=encoding, newline="\n"):
        yield line, len(line.encode(encoding))


def _iter_lines(fh: BinaryIO, on_bytes: Callable[[int], None] | None, encoding: str) -> Iterator[DumpRecord]:
    index = 0
    consumed = 0
    for line_no, (raw, size) in enumerate(_text_lines(fh, encoding), start=1):
        consumed += size
        if on_bytes is not None and line_no % 256 == 0:
            on_bytes(consumed)
        text = raw.strip()
        if line_no == 1:
            text = text.lstrip("\ufeff")
        if not text:
            continue
        index += 1
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            yield DumpRecord(index, line_no, error=f"invalid JSON: {exc.msg} at column {exc.colno}")
            continue
        except RecursionError:
            yield DumpRecord(index, line_no, error=_NESTING_ERROR)
            continue
        finally:
            del raw, text  # a huge line is not kept while its record is processed
        yield DumpRecord(index, line_no, value=value)
    if on_bytes is not None:
        on_bytes(consumed)


class _ArrayReader:
    """Incremental reader of one top-level JSON array; see Note [Streaming a JSON array with recovery]."""

    def __init__(self, fh: BinaryIO, on_bytes: Callable[[int], None] | None, chunk_bytes: int, encoding: str) -> None:
        self.fh = fh
        self.on_bytes = on_bytes
        self.chunk_bytes = chunk_bytes
        self.text = codecs.getincrementaldecoder(encoding)(errors="strict")  # checked beforehand
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.bytes_read = 0
        self.line = 1  # line number at self.pos
        self._line_mark = 0  # buffer index up to which newlines were counted into self.line
        self._bom_checked = False

    def _fill(self, at_least: int | None = None) -> bool:
        """Append the next chunk; drop the consumed prefix. False at end of file."""
        if self.eof:
            return False
        self._advance_line(self.pos)
        if self.pos:
            self.buf = self.buf[self.pos :]
            self._line_mark -= self.pos
            self.pos = 0
        data = self.fh.read(max(self.chunk_bytes, at_least or 0))
        self.bytes_read += len(data)
        if self.on_bytes is not None:
            self.on_bytes(self.bytes_read)
        if not data:
            self.eof = True
            self.buf += self.text.decode(b"", final=True)
            return False
        self.buf += self.text.decode(data)
        if not self._bom_checked and self.buf:
            self._bom_checked = True
            if self.buf[0] == "\ufeff":
                self.buf = self.buf[1:]
        return True

    def _advance_line(self, upto: int) -> None:
        if upto > self._line_mark:
            self.line += self.buf.count("\n", self._line_mark, upto)
            self._line_mark = upto

    def _skip_ws(self) -> bool:
        """Move to the next non-blank character; False if the file ended first."""
        while True:
            self.pos = _WHITESPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return True
            if not self._fill():
                return False

    def records(self) -> Iterator[DumpRecord]:
        self._fill()
        if not self._skip_ws() or self.buf[self.pos] != "[":
            raise DumpFormatError("not a JSON array")  # detect_format said otherwise: the file changed
        self.pos += 1
        index = 0
        while True:
            if not self._skip_ws():
                if index:
                    self._advance_line(self.pos)
                    yield DumpRecord(index + 1, self.line, error="truncated: the file ends before the array is closed")
                else:
                    yield DumpRecord(1, self.line, error="truncated: the file ends before the array is closed")
                return
            char = self.buf[self.pos]
            if char == "]":
                self.pos += 1
                if self._skip_ws():
                    self._advance_line(self.pos)
                    yield DumpRecord(index + 1, self.line, error="unexpected data after the closing ']' (ignored)")
                return
            if char == ",":
                self.pos += 1
                if not self._skip_ws():
                    continue  # reported as truncated at the top of the loop
                if self.buf[self.pos] in ",]":
                    self._advance_line(self.pos)
                    index += 1
                    yield DumpRecord(index, self.line, error="empty element (stray comma)")
                    continue
            index += 1
            yield self._element(index)
            if self._done:
                return

    _done = False

    def _element(self, index: int) -> DumpRecord:
        record = self._decode_element(index)
        if self.pos > self.chunk_bytes:
            # a record longer than a chunk: drop its text now, before its value is processed
            self._advance_line(self.pos)
            self.buf = self.buf[self.pos :]
            self._line_mark -= self.pos
            self.pos = 0
        return record

    def _decode_element(self, index: int) -> DumpRecord:
        grow = 0
        while True:
            start = self.pos
            self._advance_line(start)
            try:
                value, end = _decoder.raw_decode(self.buf, start)
            except RecursionError:
                end = _scan_end(self.buf, start)
                if end is None and self._fill(self.chunk_bytes * (1 << min(grow := grow + 1, 6))):
                    continue
                self.pos = len(self.buf) if end is None else end
                self._done = end is None
                return DumpRecord(index, self.line, error=_NESTING_ERROR)
            except json.JSONDecodeError as exc:
                end = _scan_end(self.buf, start)
                if end is None:
                    # cut by the chunk boundary, or the file ends inside this element
                    grow += 1
                    if self._fill(self.chunk_bytes * (1 << min(grow, 6))):
                        continue
                    start = self.pos
                    end = _scan_end(self.buf, start)
                    if end is None:
                        self._done = True
                        self.pos = len(self.buf)
                        return DumpRecord(index, self.line, error="truncated: the file ends inside this record")
                    try:  # the last bytes completed it
                        value, end = _decoder.raw_decode(self.buf, start)
                    except json.JSONDecodeError as final_exc:
                        self.pos = end
                        return DumpRecord(index, self.line, error=_describe(final_exc, self.buf, start))
                    except RecursionError:
                        self.pos = end
                        return DumpRecord(index, self.line, error=_NESTING_ERROR)
                    self.pos = end
                    return DumpRecord(index, self.line, value=value)
                self.pos = end
                return DumpRecord(index, self.line, error=_describe(exc, self.buf, start))
            if end == len(self.buf) and not self.eof and self.buf[start] not in "{[\"":
                # a bare number or literal may continue in the next chunk
                if self._fill():
                    continue
            self.pos = end
            return DumpRecord(index, self.line, value=value)


def _describe(exc: json.JSONDecodeError, buf: str, start: int) -> str:
    line_offset = buf.count("\n", start, exc.pos)
    return f"invalid JSON: {exc.msg} ({line_offset} line(s) into the record)"


def _scan_end(buf: str, start: int) -> int | None:
    """Index just past the element starting at ``start``, or None if it runs past the buffer."""
    if start >= len(buf):
        return None
    if buf[start] not in "{[":
        if buf[start] == '"':
            match = _STRING_BODY.match(buf, start + 1)
            return match.end() if match else None
        found = _SCALAR_END.search(buf, start)
        return found.start() if found else None
    depth = 0
    pos = start
    while True:
        found = _STRUCTURE.search(buf, pos)
        if found is None:
            return None
        char = found.group()
        if char == '"':
            body = _STRING_BODY.match(buf, found.end())
            if body is None:
                return None
            pos = body.end()
            continue
        pos = found.end()
        if char in "{[":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return pos
