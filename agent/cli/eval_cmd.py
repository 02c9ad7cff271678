"""`transfuzz eval extraction`: score an extractor (the offline analyzer or a model) against labels.
`transfuzz eval transfer`: the rank at which transfer proposes APIs known to share a root cause."""

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
        from agent.cli.stage_docs import EvalExtractionOutput

        cli.emit(EvalExtractionOutput.model_validate({"labels": str(labels), "split": split.value,
                                                      "extractor": extractor, **scores.to_dict()}))
        return
    title = f"{extractor} on {labels.name} [{split.value}]: {scores.reports} reports, {scores.errors} extractor errors"
    Console(highlight=False).print(scores_renderable(scores, title, misses=show_misses))


REPO_EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class EvalMatcher(StrEnum):
    tfidf = "tfidf"
    embeddings = "embeddings"


@eval_app.command("transfer")
def transfer(
    ctx: typer.Context,
    groups: Annotated[Path, typer.Option("--groups", help="JSON file of root-cause groups.")] =
        REPO_EXAMPLES / "eval" / "transfer_groups.json",
    issues: Annotated[Path, typer.Option("--issues", help="Issues whose offline patterns are the sources "
                                         "(a group without one gets a pattern built from its kind and modes).")] =
        REPO_EXAMPLES / "sample_issues.json",
    matcher: Annotated[EvalMatcher, typer.Option("--matcher", help="Text similarity that orders the gated APIs.")] =
        EvalMatcher.tfidf,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="k of hit@k (the transfer stage keeps this many).")] = 5,
) -> None:
    """Rank of each sibling API for its group's source pattern, hit@k, MRR and the lift over a random
    pick among the APIs that pass the same gates; share confirmed from the database's findings."""
    from agent.eval.transfer import (GroupsFileError, evaluate_transfer, inventory_profiles, load_groups,
                                     read_issue_records, sample_patterns, stored_findings)
    from agent.eval.transfer_render import transfer_renderable
    from agent.pipeline import _source_profile_fn
    from agent.transfer.matcher import MatcherUnavailable, choose_matcher
    from agent.transfer.rank import TransferIndex
    from db.engine import sqlite_file

    cli = get_ctx(ctx)
    try:
        group_list = load_groups(groups)
        samples = sample_patterns(read_issue_records(issues))
    except GroupsFileError as exc:
        fail(str(exc), code=EXIT_USAGE)
    notes: list[str] = []
    path = sqlite_file(cli.settings.db_url)
    store = None  # a database that is not there is not created: ranks need none, only embeddings a cache
    if matcher is EvalMatcher.embeddings or path is None or Path(path).expanduser().is_file():
        store = cli.store()
    else:
        notes.append("no database: inventory computed from torch, share confirmed not measured")
    profiles, inventory_source = inventory_profiles(store)
    similarity = None
    if matcher is EvalMatcher.embeddings:
        try:
            choice = choose_matcher(store, cli.settings, "embeddings")
            similarity = choice.factory(profiles)
        except MatcherUnavailable as exc:
            fail(str(exc), code=EXIT_USAGE)
    result = evaluate_transfer(group_list, TransferIndex(profiles, similarity), samples=samples,
                               source_profile=_source_profile_fn(), top_k=top_k,
                               findings=stored_findings(store) if store is not None else None,
                               inventory_source=inventory_source)
    result.notes.extend(notes)
    if cli.json:
        from agent.cli.stage_docs import EvalTransferOutput

        cli.emit(EvalTransferOutput.model_validate({"groups_file": str(groups), **result.to_dict()}))
        return
    Console(highlight=False).print(transfer_renderable(result))
