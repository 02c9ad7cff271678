"""`transfuzz stats`: what the database holds, per table and status."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from agent.cli.context import get_ctx


def stats(ctx: typer.Context) -> None:
    """Counts per table and status."""
    from db.queries.stats import table_counts

    cli = get_ctx(ctx)
    store = cli.store()
    with store.session() as session:
        counts = table_counts(session)
    if cli.json:
        cli.emit({"db": store.masked_url, "tables": counts})
        return
    table = Table(title=f"TransFuzz database {store.masked_url}")
    table.add_column("table")
    table.add_column("total", justify="right")
    table.add_column("by status")
    for name, info in counts.items():
        detail = ", ".join(f"{k}: {v}" for k, v in info["by_status"].items())  # type: ignore[union-attr]
        table.add_row(name, str(info["total"]), detail)
    Console().print(table)
