"""`transfuzz transfer`: API inventory, ranked target APIs per pattern, and their harness specs."""

from __future__ import annotations

from typing import Annotated

import typer

from agent.cli.context import EXIT_FAILURE, EXIT_USAGE, fail, get_ctx
from agent.cli.llm_opts import LlmBudgetOpt, LlmOpt, LlmTimeoutOpt, ModelOpt, llm_settings, make_cli_backend


def transfer(
    ctx: typer.Context,
    top_k: Annotated[int, typer.Option("--top-k", min=1, max=50, help="Targets kept per pattern.")] = 5,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most this many patterns.")] = None,
    refresh: Annotated[bool, typer.Option("--refresh-inventory", help="Recompute API semantics even if cached.")] = False,
    matcher: Annotated[str, typer.Option("--matcher", help="tfidf | embeddings | auto (embeddings when "
                                         "TRANSFUZZ_EMBEDDING_MODEL and an endpoint are set).")] = "auto",
    llm: LlmOpt = None,
    model: ModelOpt = None,
    llm_budget: LlmBudgetOpt = None,
    llm_timeout: LlmTimeoutOpt = None,
) -> None:
    """Rank target APIs with the same semantics for each new pattern, then generate harnesses."""
    from agent.pipeline import transfer_stage

    from agent.llm.errors import LlmConfigError

    cli = get_ctx(ctx)
    settings = llm_settings(cli.settings, llm, model, llm_budget, llm_timeout)
    store = cli.store()
    backend = make_cli_backend(settings, store)
    try:
        result = transfer_stage(store, settings, top_k=top_k, limit=limit, refresh=refresh, err=cli.err,
                                matcher=matcher, llm_backend=backend)
    except (ValueError, LlmConfigError) as exc:
        fail(str(exc), code=EXIT_USAGE)
    if cli.json:
        from agent.cli.stage_docs import TransferOutput

        cli.emit(TransferOutput.model_validate(result))
    else:
        typer.echo(
            f"inventory: {result['inventory_apis']} APIs; patterns: {result['patterns']}; "
            f"candidates: {result['candidates']} ({result['vetoed']} vetoed); harnesses: {result['harnesses']}"
        )
        typer.echo(f"matcher: {result['matcher']} ({result['inventory_embedded']} inventory APIs embedded)")
        for note in result.get("matcher_notes", []):
            typer.echo(f"  note: {note}")
    if result.get("llm_stopped"):
        from agent.text_safety import markup_safe

        cli.err.print(f"transfer stopped early: {markup_safe(result['llm_stopped'])}", highlight=False, soft_wrap=True)
        breaker = getattr(backend, "breaker", None)
        if breaker is not None and breaker.open:
            raise typer.Exit(EXIT_FAILURE)


def register(app: typer.Typer) -> None:
    app.command("transfer")(transfer)
