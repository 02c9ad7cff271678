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

    from agent.cli.fuzz_api import FuzzApiOutput
    from agent.cli.stage_docs import (EvalExtractionOutput, EvalIssuesOutput, EvalTransferOutput, ExportOutput,
                                      ExtractOutput, FuzzOutput, IngestOutput, TransferOutput)

    return {"run": RunOutput, "review-list": ReviewList, "review-show": ReviewShow, "stats": DatabaseStats,
            "stats-run": RunStats, "ingest": IngestOutput, "extract": ExtractOutput, "transfer": TransferOutput,
            "fuzz": FuzzOutput, "fuzz-api": FuzzApiOutput, "export": ExportOutput,
            "eval-extraction": EvalExtractionOutput, "eval-extraction-issues": EvalIssuesOutput,
            "eval-transfer": EvalTransferOutput}


def schema(
    name: Annotated[str | None, typer.Argument(help="run, review-list, review-show, stats, stats-run, ingest, extract, transfer, "
                                               "fuzz, fuzz-api, export, eval-extraction, eval-extraction-issues or "
                                               "eval-transfer; "
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
