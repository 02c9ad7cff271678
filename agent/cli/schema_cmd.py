"""`transfuzz schema [NAME]`: the JSON Schema of each versioned `--json` document."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from pydantic import BaseModel

from agent.cli.context import EXIT_USAGE, fail


def documents() -> dict[str, type[BaseModel]]:
    """Name -> model of every `--json` output that carries schema_version."""
    from agent.cli.review_cmd import ReviewList, ReviewShow
    from agent.cli.run_summary import RunOutput
    from agent.cli.stats import DatabaseStats, RunStats

    return {"run": RunOutput, "review-list": ReviewList, "review-show": ReviewShow, "stats": DatabaseStats,
            "stats-run": RunStats}


def schema(
    name: Annotated[str | None, typer.Argument(help="run, review-list, review-show, stats or stats-run; "
                                               "none: the list of names.")] = None,
) -> None:
    """Print the JSON Schema of a `--json` output (every such document has schema_version)."""
    from agent.cli.json_out import SCHEMA_VERSION

    models = documents()
    if name is None:
        typer.echo(f"schema_version {SCHEMA_VERSION}; documents: {', '.join(models)}")
        return
    if name not in models:
        fail(f"no schema named {name!r}: one of {', '.join(models)}", code=EXIT_USAGE)
    document = models[name].model_json_schema(mode="serialization")
    document["$id"] = f"transfuzz:{name}/v{SCHEMA_VERSION}"
    typer.echo(json.dumps(document, indent=2))
