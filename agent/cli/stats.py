"""`transfuzz stats`: what the database holds, per table and status; `--run ID`: one run's figures."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from pydantic import BaseModel
from rich.table import Table

from agent.cli.context import EXIT_USAGE, fail, get_ctx
from agent.cli.json_out import Versioned
from agent.cli.run_summary import ReasonCount, group_reasons
from agent.text_safety import rich_text


class TableCount(BaseModel):
    total: int
    by_status: dict[str, int]


class DatabaseStats(Versioned):
    """`transfuzz stats --json`."""

    db: str
    tables: dict[str, TableCount]


class RunStats(Versioned):
    """`transfuzz stats --run ID --json`: the figures `transfuzz run` printed for that run."""

    db: str
    run_id: int
    command: str
    started_at: str
    ended_at: str | None
    exit_reason: str | None
    verdicts: dict[str, int]
    inconclusive: int
    not_applicable: list[ReasonCount]
    counters: dict[str, Any]


def stats(
    ctx: typer.Context,
    run: Annotated[int | None, typer.Option("--run", min=1, help="One run's figures (its verdicts, not_applicable "
                                            "by reason, what `transfuzz run` did before fuzzing).")] = None,
) -> None:
    """Counts per table and status, or one run's figures with --run."""
    cli = get_ctx(ctx)
    store = cli.store(must_exist=True)
    if run is not None:
        _run_stats(cli, store, run)
        return
    from db.queries.stats import table_counts

    with store.session() as session:
        counts = table_counts(session)
    output = DatabaseStats(db=store.masked_url, tables={name: TableCount.model_validate(info)
                                                        for name, info in counts.items()})
    if cli.json:
        cli.emit(output)
        return
    from agent.cli.terminal import output_console

    table = Table(title=f"TransFuzz database {store.masked_url}")
    table.add_column("table")
    table.add_column("rows", justify="right")
    table.add_column("by status", overflow="fold")
    for name, info in output.tables.items():
        table.add_row(name, str(info.total), ", ".join(f"{k}: {v}" for k, v in info.by_status.items()))
    output_console().print(table)


def _run_stats(cli: Any, store: Any, run_id: int) -> None:
    from db.queries.stats import RunNotFound, run_reasons, run_row, run_verdicts

    with store.session() as session:
        try:
            row = run_row(session, run_id)
        except RunNotFound as exc:
            fail(str(exc), code=EXIT_USAGE)
        verdicts = run_verdicts(session, run_id)
        output = RunStats(db=store.masked_url, run_id=run_id, command=row.command, started_at=row.started_at.isoformat(),
                          ended_at=row.ended_at.isoformat() if row.ended_at else None, exit_reason=row.exit_reason,
                          verdicts=verdicts, inconclusive=verdicts.get("inconclusive", 0),
                          not_applicable=group_reasons(run_reasons(session, run_id, "not_applicable")),
                          counters=dict(row.counters or {}))
    if cli.json:
        cli.emit(output)
        return
    from agent.cli.terminal import output_console

    table = Table(title=f"run {run_id} ({output.command}), {output.exit_reason or 'not finished'}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("started", output.started_at[:19])
    table.add_row("ended", (output.ended_at or "-")[:19])
    for key, value in sorted(output.counters.get("pipeline", {}).items()):
        table.add_row(key.replace("_", " "), str(value))
    for verdict, count in output.verdicts.items():
        table.add_row(f"verdict: {verdict}", str(count))
    for reason in output.not_applicable:
        table.add_row(rich_text(f"  not_applicable: {reason.reason}"), str(reason.count))
    output_console().print(table)
