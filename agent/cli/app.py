"""The `transfuzz` command line: global options and the command groups of DESIGN.md."""

from __future__ import annotations

from typing import Annotated

import typer

from agent.cli.argv import hoisting_group
from agent.cli.context import EXIT_USAGE, CliContext, fail
from agent.config import load_settings

EPILOG = "Exit codes: 0 success; 1 findings or failure where a gate needs it; 2 usage error."

app = typer.Typer(
    name="transfuzz",
    help="Mine silent PyTorch bugs from issues, transfer them to similar APIs, confirm them by differential fuzzing.",
    epilog=EPILOG,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    cls=hoisting_group(),  # `transfuzz review list --json` means `transfuzz --json review list`
)


@app.callback()
def main_options(
    ctx: typer.Context,
    db: Annotated[str | None, typer.Option("--db", help="Database URL (default: TRANSFUZZ_DB_URL or sqlite:///transfuzz.db).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout; logs on stderr.")] = False,
) -> None:
    try:
        settings = load_settings({"db_url": db})
    except ValueError as exc:
        fail(str(exc).splitlines()[0], code=EXIT_USAGE)
    ctx.obj = CliContext(settings=settings, json=json_output)
    ctx.call_on_close(ctx.obj.close)


def _register() -> None:
    from agent.cli import (
        db_cmd,
        eval_cmd,
        export_cmd,
        extract_cmd,
        fuzz,
        ingest_cmd,
        review_cmd,
        run_cmd,
        schema_cmd,
        serve_cmd,
        stats,
        transfer_cmd,
    )

    # In the order of DESIGN.md's contract.
    run_cmd.register(app)
    ingest_cmd.register(app)
    extract_cmd.register(app)
    transfer_cmd.register(app)
    app.add_typer(fuzz.fuzz_app, name="fuzz")
    review_cmd.register(app)

    app.command("serve")(serve_cmd.serve)

    export_cmd.register(app)
    app.command("stats")(stats.stats)
    app.command("schema")(schema_cmd.schema)
    app.add_typer(db_cmd.db_app, name="db")
    app.add_typer(eval_cmd.eval_app, name="eval")


_register()


def main() -> None:
    app(prog_name="transfuzz")
