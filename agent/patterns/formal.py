"""Print a BugPattern in the formal notation of DESIGN.md and parse it back.

    JIT_Eager_Mismatch ::= APICall(torch.mm)[mode=eager] → v1
                         ∧ APICall(torch.mm)[mode=jit.trace] → v2
                         ∧ Trigger(special_values=[nan])
                         ∧ OracleCheck(ValueCorrectness)(condition=Compare(v1, v2, tol=0.001)) → FAIL

The ASCII spellings ``->`` and ``AND`` are accepted everywhere. The ``Trigger(...)`` clause is
our extension and is printed only when the trigger is not empty.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from agent.patterns.schema import ORACLE_CONDITIONS, BugPattern, Mode, Oracle, OracleKind, PatternKind, Trigger

ARROW, AND = "→", "∧"
_BARE_VALUE = re.compile(r"^[A-Za-z0-9_.:+\-]+$")


class FormalParseError(ValueError):
    """A formal pattern that does not parse; names the position and the offending token."""

    def __init__(self, message: str, position: int, token: str) -> None:
        super().__init__(f"{message} at position {position} (token {token!r})")
        self.position = position
        self.token = token


# ---------------------------------------------------------------- printing


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    if _BARE_VALUE.match(text) and not _looks_typed(text):
        return text
    return json.dumps(text, ensure_ascii=False)


def _looks_typed(text: str) -> bool:
    """Bare words that would read back as a bool or number must be quoted to stay strings."""
    return text in ("true", "false") or _as_number(text) is not None


def _as_number(text: str) -> int | float | None:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return None
    return number if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text) else None


def _mode(mode: Mode) -> str:
    parts = [f"mode={mode.name}"] + [f"{k}={_value(v)}" for k, v in mode.options.items()]
    return "[" + ", ".join(parts) + "]"


def _trigger(trigger: Trigger) -> str:
    parts: list[str] = []
    if trigger.dtypes:
        parts.append("dtypes=[" + ", ".join(trigger.dtypes) + "]")
    if trigger.special_values:
        parts.append("special_values=[" + ", ".join(trigger.special_values) + "]")
    if trigger.layout:
        parts.append(f"layout={trigger.layout}")
    if trigger.shape:
        parts.append("shape=[" + ", ".join(trigger.shape) + "]")
    if trigger.params:
        parts.append("params={" + ", ".join(f"{k}={_value(v)}" for k, v in trigger.params.items()) + "}")
    return "Trigger(" + ", ".join(parts) + ")"


def _oracle(oracle: Oracle, arrow: str) -> str:
    args = ["v1", "v2"] + [
        f"{name}={_value(getattr(oracle, name))}" for name in ("tol", "rtol", "atol") if getattr(oracle, name) is not None
    ]
    condition = f"{ORACLE_CONDITIONS[oracle.kind]}({', '.join(args)})"
    return f"OracleCheck({oracle.kind.value})(condition={condition}) {arrow} FAIL"


def to_formal(pattern: BugPattern, *, ascii: bool = False) -> str:
    arrow, conj = ("->", "AND") if ascii else (ARROW, AND)
    head = f"{pattern.kind.value} ::= "
    pad = "\n" + " " * (len(head) - 2) + conj + " "
    clauses = [
        f"APICall({pattern.api}){_mode(pattern.reference_mode)} {arrow} v1",
        f"APICall({pattern.api}){_mode(pattern.test_mode)} {arrow} v2",
    ]
    if not pattern.trigger.is_empty():
        clauses.append(_trigger(pattern.trigger))
    clauses.append(_oracle(pattern.oracle, arrow))
    return head + pad.join(clauses)


# ---------------------------------------------------------------- parsing

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<define>::=)
  | (?P<arrow>→|->)
  | (?P<and>∧|\bAND\b)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<punct>[()\[\]{},=])
  | (?P<word>[A-Za-z0-9_.:+\-]+)
    """,
    re.VERBOSE,
)


class _Word(str):
    """A bare word: its type (bool, number, text) depends on where it stands."""

    pos: int = 0

    @classmethod
    def at(cls, text: str, pos: int) -> _Word:
        word = cls(text)
        word.pos = pos
        return word


def _typed(value: Any) -> Any:
    """Mode options and oracle tolerances: bare words read as bool or number where they can."""
    if isinstance(value, _Word):
        if value in ("true", "false"):
            return value == "true"
        number = _as_number(value)
        return str(value) if number is None else number
    return value


def _text(value: Any) -> Any:
    """Trigger fields are text: bare words stay exactly as written (``-0.0``, ``nan``)."""
    if isinstance(value, list):
        return [_text(v) for v in value]
    if isinstance(value, dict):
        return {k: _text(v) for k, v in value.items()}
    return str(value) if isinstance(value, str) else value


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    pos: int


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN_RE.match(text, pos)
        if match is None:
            raise FormalParseError("unexpected character", pos, text[pos])
        kind = match.lastgroup or ""
        if kind != "ws":
            tokens.append(_Token(kind, match.group(), pos))
        pos = match.end()
    tokens.append(_Token("end", "", len(text)))
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.i = 0

    @property
    def tok(self) -> _Token:
        return self.tokens[self.i]

    def error(self, message: str) -> FormalParseError:
        return FormalParseError(message, self.tok.pos, self.tok.text or "<end>")

    def take(self, kind: str, text: str | None = None) -> _Token:
        tok = self.tok
        if tok.kind != kind or (text is not None and tok.text != text):
            expected = text if text is not None else kind
            raise self.error(f"expected {expected!r}")
        self.i += 1
        return tok

    def at(self, kind: str, text: str | None = None) -> bool:
        return self.tok.kind == kind and (text is None or self.tok.text == text)

    # value := WORD | STRING | '[' values ']' | '{' kvs '}'
    def value(self) -> Any:
        if self.at("string"):
            return json.loads(self.take("string").text)
        if self.at("punct", "["):
            self.take("punct", "[")
            items: list[Any] = []
            while not self.at("punct", "]"):
                items.append(self.value())
                if not self.at("punct", "]"):
                    self.take("punct", ",")
            self.take("punct", "]")
            return items
        if self.at("punct", "{"):
            self.take("punct", "{")
            mapping = self.kvs(closer="}")
            self.take("punct", "}")
            return mapping
        tok = self.take("word")
        return _Word.at(tok.text, tok.pos)

    def kvs(self, closer: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while not self.at("punct", closer):
            key_tok = self.take("word")
            if key_tok.text in out:
                raise FormalParseError("duplicate key", key_tok.pos, key_tok.text)
            self.take("punct", "=")
            out[key_tok.text] = self.value()
            if not self.at("punct", closer):
                self.take("punct", ",")
        return out

    def apicall(self) -> tuple[str, Mode, str, int]:
        start = self.take("word", "APICall").pos
        self.take("punct", "(")
        api = self.take("word").text
        self.take("punct", ")")
        self.take("punct", "[")
        options = self.kvs(closer="]")
        self.take("punct", "]")
        mode = _mode_from(options, start)
        self.take("arrow")
        var = self.take("word").text
        return api, mode, var, start

    def oracle(self) -> tuple[dict[str, Any], int]:
        start = self.take("word", "OracleCheck").pos
        self.take("punct", "(")
        kind_tok = self.take("word")
        self.take("punct", ")")
        self.take("punct", "(")
        self.take("word", "condition")
        self.take("punct", "=")
        cond_tok = self.take("word")
        self.take("punct", "(")
        args = [self.take("word").text]
        self.take("punct", ",")
        args.append(self.take("word").text)
        extra: dict[str, Any] = {}
        if self.at("punct", ","):
            self.take("punct", ",")
            extra = self.kvs(closer=")")
        self.take("punct", ")")
        self.take("punct", ")")
        self.take("arrow")
        self.take("word", "FAIL")
        try:
            kind = OracleKind(kind_tok.text)
        except ValueError:
            raise FormalParseError("unknown oracle kind", kind_tok.pos, kind_tok.text) from None
        if ORACLE_CONDITIONS[kind] != cond_tok.text:
            raise FormalParseError(
                f"{kind.value} expects condition {ORACLE_CONDITIONS[kind]}", cond_tok.pos, cond_tok.text
            )
        if args != ["v1", "v2"]:
            raise FormalParseError("oracle must compare v1 and v2", cond_tok.pos, ", ".join(args))
        return {"kind": kind, **{k: _typed(v) for k, v in extra.items()}}, start

    def pattern(self) -> BugPattern:
        kind_tok = self.take("word")
        try:
            kind = PatternKind(kind_tok.text)
        except ValueError:
            raise FormalParseError("unknown pattern kind", kind_tok.pos, kind_tok.text) from None
        self.take("define")
        calls: list[tuple[str, Mode, str, int]] = []
        trigger: dict[str, Any] = {}
        oracle: tuple[dict[str, Any], int] | None = None
        while True:
            if self.at("word", "APICall"):
                calls.append(self.apicall())
            elif self.at("word", "Trigger"):
                self.take("word", "Trigger")
                self.take("punct", "(")
                trigger = self.kvs(closer=")")
                self.take("punct", ")")
            elif self.at("word", "OracleCheck"):
                oracle = self.oracle()
            else:
                raise self.error("expected APICall, Trigger or OracleCheck")
            if self.at("end"):
                break
            self.take("and")
        if len(calls) != 2:
            raise FormalParseError("expected exactly two APICall clauses", kind_tok.pos, kind_tok.text)
        if oracle is None:
            raise FormalParseError("missing OracleCheck clause", self.tok.pos, "<end>")
        if calls[0][2] != "v1":
            calls.reverse()
        (api1, mode1, _var1, _pos1), (api2, mode2, _var2, pos2) = calls
        if api1 != api2:
            raise FormalParseError("both APICall clauses must name the same API", pos2, api2)
        try:
            return BugPattern(
                kind=kind,
                api=api1,
                reference_mode=mode1,
                test_mode=mode2,
                trigger=Trigger(**_text(trigger)),
                oracle=Oracle(**oracle[0]),
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            raise FormalParseError(f"invalid pattern: {first['msg']}", kind_tok.pos, str(first.get("input"))) from None


def _mode_from(options: dict[str, Any], pos: int) -> Mode:
    raw_name = options.get("mode")
    if isinstance(raw_name, _Word):
        pos = raw_name.pos
    opts = {k: _typed(v) for k, v in options.items()}
    name = opts.pop("mode", None)
    if not isinstance(name, str):
        raise FormalParseError("APICall needs [mode=NAME]", pos, str(name))
    try:
        return Mode(name=name, options=opts)
    except ValidationError:
        raise FormalParseError("unknown mode", pos, name) from None


def parse_formal(text: str) -> BugPattern:
    """Parse the notation back into a BugPattern (metadata fields take their defaults)."""
    return _Parser(text).pattern()
