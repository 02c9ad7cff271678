"""The formal bug pattern: the language every stage speaks (pure pydantic, no torch)."""

from agent.patterns.formal import FormalParseError, parse_formal
from agent.patterns.schema import (
    KNOWN_MODES,
    BugPattern,
    Mode,
    Oracle,
    OracleKind,
    PatternKind,
    Trigger,
)

__all__ = [
    "KNOWN_MODES",
    "BugPattern",
    "FormalParseError",
    "Mode",
    "Oracle",
    "OracleKind",
    "PatternKind",
    "Trigger",
    "parse_formal",
]
