"""Extraction: triage an issue, turn it into a formal BugPattern, describe its API.

Imports are lazy so that ``semantics_for`` and the analyzer load without the database layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.extract.analyzer import Analysis, analyze_issue
    from agent.extract.semantics import semantics_for
    from agent.extract.stage import ExtractionSummary, run_extraction

__all__ = ["Analysis", "ExtractionSummary", "analyze_issue", "run_extraction", "semantics_for"]


def __getattr__(name: str) -> Any:
    if name in ("Analysis", "analyze_issue"):
        from agent.extract import analyzer

        return getattr(analyzer, name)
    if name == "semantics_for":
        from agent.extract.semantics import semantics_for

        return semantics_for
    if name in ("ExtractionSummary", "run_extraction"):
        from agent.extract import stage

        return getattr(stage, name)
    raise AttributeError(name)
