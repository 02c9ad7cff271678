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
    train = "train"
    eval = "eval"
    all = "all"


SPLIT_HELP = ("Which records to score. With the project's own labels (--labels only): dev, heldout (default) "
              "or all, as each record's split field says. With --issues: train (default), eval or all, fixed by "
              "the issue number: eval when int(sha256(str(number).encode()).hexdigest(), 16) % 2 == 1, else "
              "train. Rules may be tuned only looking at train; eval is reported, never read while writing "
              "rules (--misses lists train issues only).")


@eval_app.command("extraction")
def extraction(
    ctx: typer.Context,
    labels: Annotated[Path, typer.Option("--labels", help="JSON Lines labels: the project's own format "
                                         "(examples/eval/), or with --issues one labelled issue a line "
                                         "(number, url, kind, verdict, has_repro, apis, modes, dtypes, trigger, "
                                         "evidence).")],
    issues: Annotated[Path | None, typer.Option("--issues", help="GitHub REST JSON array of the labelled issues "
                                                "(read as `ingest file` reads it); labels join it by number.")] = None,
    llm: Annotated[LlmChoice, typer.Option("--llm", help="Extractor to measure.")] = LlmChoice.offline,
    model: ModelOpt = None,
    split: Annotated[SplitChoice | None, typer.Option("--split", help=SPLIT_HELP)] = None,
    show_misses: Annotated[bool, typer.Option("--misses", help="Also list the reports the extractor got wrong "
                                              "(with --issues: train issues only).")] = False,
    record: Annotated[bool, typer.Option("--record", help="With --issues: run each report's repro once under "
                                         "the recorder in the sandbox (as `extract` does) and give the extractor "
                                         "what ran; needs bubblewrap, up to a minute a report.")] = False,
) -> None:
    """Per-class triage precision/recall/F1, confusion table, kind/API/mode accuracy (nothing is stored).

    With --issues DUMP: real tracker issues and their labels; also silent-bug recall (the share of issues
    labelled bug with a repro that become a pattern) and kind/API/mode accuracy on those. The split is
    fixed by issue number (see --split): tune rules on train only; eval is reported, never read.
    """
    if issues is not None:
        _extraction_on_issues(ctx, issues, labels, llm, model, split or SplitChoice.train, show_misses, record)
        return
    if record:
        fail("--record needs --issues: the project's own labels have no runnable tracker reports", code=EXIT_USAGE)
    split = split or SplitChoice.heldout
    if split not in (SplitChoice.dev, SplitChoice.heldout, SplitChoice.all):
        fail(f"--split {split.value} needs --issues: the project's own labels split as dev, heldout or all",
             code=EXIT_USAGE)
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


def _extraction_on_issues(ctx: typer.Context, issues: Path, labels: Path, llm: LlmChoice, model: str | None,
                          split: SplitChoice, show_misses: bool, record: bool = False) -> None:
    """`eval extraction --issues DUMP --labels FILE`: see Note [Real-issue labels and the fixed split]
    (agent/eval/issue_labels.py) and Note [Scoring real-issue labels] (agent/eval/issue_scoring.py)."""
    from agent.eval.issue_labels import (SPLIT_RULE, DumpFileError, join, load_dump, load_issue_labels,
                                         select_issue_split)
    from agent.eval.issue_scoring import score_issues
    from agent.eval.labels import LabelsFileError
    from agent.eval.predict import predict_issues
    from agent.eval.render import issue_scores_renderable
    from agent.llm.errors import STAGE_STOPPING_ERRORS, LlmConfigError
    from agent.llm.factory import make_backend

    cli = get_ctx(ctx)
    if split not in (SplitChoice.train, SplitChoice.eval, SplitChoice.all):
        fail(f"--split {split.value} is for the project's own labels; with --issues: train, eval or all",
             code=EXIT_USAGE)
    try:
        label_lines = load_issue_labels(labels)
        dump = load_dump(issues)
        reports = select_issue_split(join(label_lines, dump, str(labels)), split.value)
    except (LabelsFileError, DumpFileError) as exc:
        fail(str(exc), code=EXIT_USAGE)
    if not reports:
        fail(f"{labels}: no records in split {split.value!r}", code=EXIT_USAGE)
    unlabelled = len(set(dump) - {entry.label.number for entry in label_lines})
    if record:
        from fuzz_core.sandbox import SandboxUnavailable, require_bwrap

        try:
            require_bwrap()
        except SandboxUnavailable as exc:
            fail(f"--record runs repros only in the sandbox: {exc}", code=EXIT_USAGE)
    settings = llm_settings(cli.settings, llm, model)
    try:
        backend = make_backend(settings)  # no store: answers are not cached, so a model is measured afresh
        results = predict_issues(backend, reports, record=record)
    except LlmConfigError as exc:
        fail(str(exc), code=EXIT_USAGE)
    except STAGE_STOPPING_ERRORS as exc:
        fail(f"evaluation stopped: {exc}", code=EXIT_FAILURE)
    scores = score_issues(results)
    extractor = ("offline" if backend.name == "offline" else f"openai:{backend.model}") + (" + recorded runs" if record else "")
    withheld = sum(1 for report in reports if report.split == "eval")
    if cli.json:
        from agent.cli.stage_docs import EvalIssuesOutput

        cli.emit(EvalIssuesOutput.model_validate({
            "issues": str(issues), "labels": str(labels), "split": split.value, "split_rule": SPLIT_RULE,
            "extractor": extractor, "unlabelled_issues": unlabelled, "eval_issues_withheld": withheld,
            **scores.to_dict()}))
        return
    title = (f"{extractor} on {labels.name} + {issues.name} [{split.value}]: {scores.reports} issues, "
             f"{scores.errors} extractor errors")
    if unlabelled:
        title += f", {unlabelled} unlabelled issues not scored"
    Console(highlight=False).print(issue_scores_renderable(scores, title, misses=show_misses, withheld=withheld))



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
