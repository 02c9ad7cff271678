"""What every command shares: settings, output mode, the stderr console, the database."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, NoReturn

import typer
from rich.console import Console

from agent.config import Settings

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


@dataclass
class CliContext:
    settings: Settings
    json: bool = False
    err: Console = field(default_factory=lambda: Console(stderr=True))
    _store: Any = None

    def store(self, *, must_exist: bool = False):  # type: ignore[no-untyped-def]
        """Open (once) the configured database at the current schema; exit 2 if unreachable.

        must_exist: commands that only read (review, stats, export) never create a SQLite file: a typo
        in its path would otherwise show an empty new database as "no findings".
        """
        if self._store is None:
            from db.engine import DatabaseUnavailable, sqlite_file
            from db.store import open_store

            path = sqlite_file(self.settings.db_url)
            if must_exist and path is not None:
                from pathlib import Path

                if not Path(path).expanduser().is_file():
                    fail(f"no database at {Path(path).expanduser().resolve()}: check --db or TRANSFUZZ_DB_URL "
                         "(`transfuzz run` or `transfuzz ingest` creates one)", code=EXIT_USAGE)

            try:
                self._store = open_store(self.settings.db_url)
            except DatabaseUnavailable as exc:
                fail(str(exc), code=EXIT_USAGE)
        return self._store

    def emit(self, obj: Any) -> None:
        """Machine-readable output: one JSON document on stdout (Note [Non-finite numbers in --json])."""
        from pydantic import BaseModel

        from agent.cli.json_out import json_ready

        if isinstance(obj, BaseModel):
            obj = obj.model_dump(mode="json")
        text = json.dumps(json_ready(obj), indent=2, default=str, ensure_ascii=False, allow_nan=False)
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


def get_ctx(ctx: typer.Context) -> CliContext:
    root = ctx.find_root()
    if not isinstance(root.obj, CliContext):  # a sub-app invoked on its own (tests)
        from agent.config import load_settings

        root.obj = CliContext(settings=load_settings())
    return root.obj


def fail(message: str, code: int = EXIT_FAILURE) -> NoReturn:
    """One line on stderr, then exit with the given code (the message often quotes input: never markup)."""
    from agent.text_safety import markup_safe

    Console(stderr=True).print(f"[bold red]error:[/] {markup_safe(message, keep_newlines=True)}", highlight=False,
                               soft_wrap=True)
    raise typer.Exit(code)


def not_built(command: str) -> NoReturn:
    """Contract commands that a later issue builds: say so, no fake output."""
    Console(stderr=True).print(f"transfuzz {command}: not built yet", highlight=False)
    raise typer.Exit(EXIT_USAGE)
