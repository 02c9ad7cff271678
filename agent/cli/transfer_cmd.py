"""`transfuzz transfer`: API inventory, ranked target APIs per pattern, and their harness specs."""

from __future__ import annotations

from typing import Annotated

import typer

from agent.cli.context import EXIT_USAGE, fail, get_ctx


def transfer(
    ctx: typer.Context,
    top_k: Annotated[int, typer.Option("--top-k", min=1, max=50, help="Targets kept per pattern.")] = 5,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most this many patterns.")] = None,
    refresh: Annotated[bool, typer.Option("--refresh-inventory", help="Recompute API semantics even if cached.")] = False,
    matcher: Annotated[str, typer.Option("--matcher", help="tfidf | embeddings | auto (embeddings when "
                                         "TRANSFUZZ_EMBEDDING_MODEL and an endpoint are set).")] = "auto",
) -> None:
    """Rank target APIs with the same semantics for each new pattern, then generate harnesses."""
    from agent.pipeline import transfer_stage

    cli = get_ctx(ctx)
    try:
        result = transfer_stage(cli.store(), cli.settings, top_k=top_k, limit=limit, refresh=refresh, err=cli.err,
                                matcher=matcher)
    except ValueError as exc:
        fail(str(exc), code=EXIT_USAGE)
    if cli.json:
        cli.emit(result)
    else:
        typer.echo(
            f"inventory: {result['inventory_apis']} APIs; patterns: {result['patterns']}; "
            f"candidates: {result['candidates']} ({result['vetoed']} vetoed); harnesses: {result['harnesses']}"
        )
        typer.echo(f"matcher: {result['matcher']} ({result['inventory_embedded']} inventory APIs embedded)")
        for note in result.get("matcher_notes", []):
            typer.echo(f"  note: {note}")


def register(app: typer.Typer) -> None:
    app.command("transfer")(transfer)
