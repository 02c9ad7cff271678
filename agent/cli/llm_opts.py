"""The LLM flags shared by `run`, `extract` and `transfer`, and building their one backend.

``--llm-budget`` takes tokens and/or calls: ``200k`` or ``200k-tokens``, ``50-calls``, or both
joined by a comma (``200k-tokens,50-calls``); environment ``TRANSFUZZ_LLM_BUDGET``. One budget
covers every LLM stage of the command and is checked before each request with its expected
size. ``--llm-timeout`` (``30s``, ``500ms``; ``TRANSFUZZ_LLM_TIMEOUT``) bounds each request.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from agent.cli.context import EXIT_USAGE, fail
from agent.config import Settings


class LlmChoice(StrEnum):
    offline = "offline"
    openai = "openai"


LlmOpt = Annotated[
    LlmChoice | None,
    typer.Option("--llm", help="Extractor backend (default: openai when an endpoint or key is set, else offline)."),
]
ModelOpt = Annotated[str | None, typer.Option("--model", help="Model name for the openai backend.")]
LlmBudgetOpt = Annotated[str | None, typer.Option(
    "--llm-budget", help="LLM tokens and/or calls for the whole command: 200k-tokens, 50-calls, 200k-tokens,50-calls.")]
LlmTimeoutOpt = Annotated[str | None, typer.Option(
    "--llm-timeout", help="Total deadline of one LLM request (connect, retries and the whole answer), e.g. 30s.")]


def llm_settings(settings: Settings, llm: LlmChoice | None = None, model: str | None = None,
                 budget: str | None = None, timeout: str | None = None) -> Settings:
    """The settings with the flags applied; a malformed flag exits 2 with the accepted forms."""
    from pydantic import ValidationError

    overrides: dict[str, Any] = {"llm": llm.value if llm else None, "model": model,
                                 "llm_budget": budget, "llm_timeout_s": timeout}
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if not overrides:
        return settings
    try:
        return Settings(**{**settings.model_dump(), **overrides})
    except (ValidationError, ValueError) as exc:
        first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        fail(first.removeprefix("Value error, "), code=EXIT_USAGE)


def make_cli_backend(settings: Settings, store: Any) -> Any:
    """The command's one LLM backend; a configuration problem exits 2 with one clear line."""
    from agent.llm.errors import LlmConfigError
    from agent.llm.factory import make_backend

    try:
        return make_backend(settings, store)
    except LlmConfigError as exc:
        fail(str(exc), code=EXIT_USAGE)
