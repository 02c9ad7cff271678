"""`transfuzz eval extraction`: score an extractor (the offline analyzer or a model) against labels."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agent.cli.context import EXIT_FAILURE, EXIT_USAGE, fail, get_ctx
from agent.cli.llm_opts import LlmChoice, ModelOpt, llm_settings

eval_app = typer.Typer(help="Measure the pipeline's stages against labelled data.", no_args_is_help=True)


class SplitChoice(StrEnum):
    dev = "dev"
    heldout = "heldout"
    all = "all"


@eval_app.command("extraction")
def extraction(
    ctx: typer.Context,
    labels: Annotated[Path, typer.Option("--labels", help="JSON Lines file of labelled reports (examples/eval/).")],
    llm: Annotated[LlmChoice, typer.Option("--llm", help="Extractor to measure.")] = LlmChoice.offline,
    model: ModelOpt = None,
    split: Annotated[SplitChoice, typer.Option("--split", help="Which records to score.")] = SplitChoice.heldout,
    show_misses: Annotated[bool, typer.Option("--misses", help="Also list the reports whose triage is wrong.")] = False,
) -> None:
    """Per-class triage precision/recall/F1, confusion table, kind/API/mode accuracy (nothing is stored)."""
    from agent.eval.labels import LabelsFileError, load_labels, select_split
    from agent.eval.predict import predict_all
    from agent.eval.render import scores_renderable
    from agent.eval.scoring import score
    from agent.llm.errors import STAGE_STOPPING_ERRORS, LlmConfigError
    from agent.llm.factory import make_backend

    cli = get_ctx(ctx)
    try:
        reports = select_split(load_labels(labels), split.value)
    except LabelsFileError as exc:
        fail(str(exc), code=EXIT_USAGE)
    if not reports:
        fail(f"{labels}: no records in split {split.value!r}", code=EXIT_USAGE)
    settings = llm_settings(cli.settings, llm, model)
    try:
        backend = make_backend(settings)  # no store: answers are not cached, so a model is measured afresh
        results = predict_all(backend, reports)
    except LlmConfigError as exc:
        fail(str(exc), code=EXIT_USAGE)
    except STAGE_STOPPING_ERRORS as exc:
        fail(f"evaluation stopped: {exc}", code=EXIT_FAILURE)
    scores = score(results)
    extractor = "offline" if backend.name == "offline" else f"openai:{backend.model}"
    if cli.json:
        cli.emit({"labels": str(labels), "split": split.value, "extractor": extractor, **scores.to_dict()})
        return
    title = f"{extractor} on {labels.name} [{split.value}]: {scores.reports} reports, {scores.errors} extractor errors"
    Console(highlight=False).print(scores_renderable(scores, title, misses=show_misses))
