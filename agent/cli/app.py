"""The `transfuzz` command line: global options and the command groups of DESIGN.md."""

from __future__ import annotations

from typing import Annotated

import typer

from agent.cli.context import EXIT_USAGE, CliContext, fail, not_built
from agent.config import load_settings

EPILOG = "Exit codes: 0 success; 1 findings or failure where a gate needs it; 2 usage error."

app = typer.Typer(
    name="transfuzz",
    help="Mine silent PyTorch bugs from issues, transfer them to similar APIs, confirm them by differential fuzzing.",
    epilog=EPILOG,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
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
    from agent.cli import db_cmd, fuzz, stats

    app.add_typer(db_cmd.db_app, name="db")
    app.add_typer(fuzz.fuzz_app, name="fuzz")
    app.command("stats")(stats.stats)

    # Commands whose modules may not exist yet are registered as honest placeholders.
    placeholders = {
        "run": "Ingest → extract → transfer → fuzz → summary, from a file or github:OWNER/REPO.",
        "extract": "Triage issues and extract formal bug patterns and API semantics.",
        "transfer": "Rank target APIs with the same semantics for each pattern.",
        "serve": "Web review page and JSON API.",
        "export": "Export findings as reports ready to file.",
    }
    import importlib

    for name, help_text in placeholders.items():
        try:
            module = importlib.import_module(f"agent.cli.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name != f"agent.cli.{name}_cmd":
                raise
            app.command(name, help=help_text)(_placeholder(name))
        else:
            module.register(app)

    for group, help_text in {
        "ingest": "Load issues from GitHub or a dump file.",
        "review": "Review proposed findings.",
    }.items():
        try:
            module = importlib.import_module(f"agent.cli.{group}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name != f"agent.cli.{group}_cmd":
                raise
            sub = typer.Typer(help=help_text)
            sub.callback(invoke_without_command=True)(_placeholder(group))
            app.add_typer(sub, name=group)
        else:
            module.register(app)


def _placeholder(name: str):  # type: ignore[no-untyped-def]
    def command() -> None:
        not_built(name)

    command.__doc__ = f"(not built yet) transfuzz {name}"
    return command


_register()


def main() -> None:
    app()
