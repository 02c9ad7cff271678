"""`transfuzz db upgrade|current`: the schema is owned by Alembic migrations."""

from __future__ import annotations

import typer

from agent.cli.context import EXIT_USAGE, fail, get_ctx

db_app = typer.Typer(help="Database schema: upgrade and inspect.", no_args_is_help=True)


def _engine(ctx: typer.Context):  # type: ignore[no-untyped-def]
    from db.engine import DatabaseUnavailable, make_engine

    try:
        return make_engine(get_ctx(ctx).settings.db_url)
    except DatabaseUnavailable as exc:
        fail(str(exc), code=EXIT_USAGE)


@db_app.command("upgrade")
def upgrade(ctx: typer.Context) -> None:
    """Upgrade the database to the newest schema revision."""
    from db.engine import masked
    from db.schema import current_revision, head_revision, upgrade as do_upgrade

    cli = get_ctx(ctx)
    engine = _engine(ctx)
    before = current_revision(engine)
    do_upgrade(engine)
    after = current_revision(engine)
    engine.dispose()
    info = {"url": masked(cli.settings.db_url), "from": before, "to": after, "head": head_revision()}
    if cli.json:
        cli.emit(info)
    else:
        typer.echo(f"{info['url']}: {before or '(empty)'} -> {after}")


@db_app.command("current")
def current(ctx: typer.Context) -> None:
    """Show the database's schema revision and whether it is at head."""
    from db.engine import masked
    from db.schema import current_revision, head_revision

    cli = get_ctx(ctx)
    engine = _engine(ctx)
    rev = current_revision(engine)
    engine.dispose()
    head = head_revision()
    info = {"url": masked(cli.settings.db_url), "current": rev, "head": head, "up_to_date": rev == head}
    if cli.json:
        cli.emit(info)
    else:
        state = "up to date" if rev == head else "behind: run `transfuzz db upgrade`"
        typer.echo(f"{info['url']}: {rev or '(empty)'} (head {head}; {state})")
