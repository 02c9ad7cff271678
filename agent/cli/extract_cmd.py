"""`transfuzz extract`: triage issues, extract formal bug patterns and API semantics."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agent.cli.context import EXIT_FAILURE, EXIT_USAGE, fail, get_ctx
from agent.cli.llm_opts import LlmBudgetOpt, LlmChoice, LlmTimeoutOpt, llm_settings
from agent.cli.sandbox_opt import NoSandboxOpt
from agent.text_safety import markup_safe


def extract(
    ctx: typer.Context,
    llm: Annotated[
        LlmChoice | None,
        typer.Option("--llm", help="Extractor backend (default: openai when an endpoint or key is set, else offline)."),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model name for the openai backend.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most this many issues.")] = None,
    only_changed: Annotated[
        bool, typer.Option("--only-changed", help="Only issues that ingest marked new or changed.")
    ] = False,
    llm_budget: LlmBudgetOpt = None,
    llm_timeout: LlmTimeoutOpt = None,
    record_budget: Annotated[str | None, typer.Option(
        "--record-budget", help="Time for running the reports' repros under the recorder, in the bubblewrap "
                                "sandbox, before extracting (e.g. 2m; 0 = off; default TRANSFUZZ_RECORD_BUDGET "
                                "or 2m).")] = None,
    record_workers: Annotated[int, typer.Option(
        "--record-workers", min=1, max=64, help="Repros recorded at once, each in its own sandbox.")] = 2,
    no_sandbox: NoSandboxOpt = False,
) -> None:
    """Triage issues and extract formal bug patterns and API semantics.

    Each report's own repro runs first, only inside the bubblewrap sandbox, under a recorder of the torch calls
    it makes; what it ran goes to the extractor as data. With --no-sandbox or without bubblewrap it is not run
    (the reason is stored).
    """
    from agent.extract.stage import run_extraction
    from agent.llm.errors import LlmConfigError

    cli = get_ctx(ctx)
    settings = llm_settings(cli.settings, llm, model, llm_budget, llm_timeout)
    recording = recording_options(settings.record_budget_s if record_budget is None else _seconds(record_budget),
                                  sandbox=not no_sandbox, workers=record_workers)
    store = cli.store()
    progress = Progress(
        TextColumn("extract"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=cli.err,
        transient=True,
        disable=cli.json or not cli.err.is_terminal,
    )
    with progress:
        task = progress.add_task("", total=None)

        def on_progress(done: int, total: int, label: str) -> None:
            progress.update(task, completed=done, total=total, description=markup_safe(label))

        try:
            summary = run_extraction(store, settings, limit=limit, only_changed=only_changed, progress=on_progress,
                                     recording=recording)
        except LlmConfigError as exc:
            fail(str(exc), code=EXIT_USAGE)
    if cli.json:
        from agent.cli.stage_docs import ExtractOutput

        cli.emit(ExtractOutput.model_validate(summary.model_dump()))
    else:
        _print(summary)
    if summary.stopped:
        Console(stderr=True).print(f"extract stopped early: {markup_safe(summary.stopped)}", highlight=False,
                                   soft_wrap=True)
    if summary.endpoint_down or (summary.processed and summary.errors == summary.processed):
        raise typer.Exit(EXIT_FAILURE)  # nothing worked: an endpoint down, a broken setup


def _seconds(text: str) -> float:
    from agent.llm.limits import parse_seconds

    if text.strip() in ("0", "0s", "off"):
        return 0.0
    try:
        return parse_seconds(text)
    except ValueError as exc:
        fail(f"--record-budget: {exc}", code=EXIT_USAGE)


def recording_options(budget_s: float, *, sandbox: bool, workers: int = 1):  # type: ignore[no-untyped-def]
    """The extract stage's recorded runs (None when the budget is 0): sandboxed, or not run with the reason.
    `workers` repros run at once: each is a fresh sandboxed interpreter, mostly torch's import, so a run on
    many reports is bound by how many start together."""
    if budget_s <= 0:
        return None
    from agent.extract.record_stage import RecordingOptions

    return RecordingOptions(sandbox=sandbox, budget_s=budget_s, workers=workers)


def _print(summary) -> None:  # type: ignore[no-untyped-def]
    table = Table(title=f"extract ({summary.extractor}, {summary.extractor_version})")
    table.add_column("")
    table.add_column("count", justify="right")
    table.add_row("issues processed", f"{summary.processed} of {summary.due} due")
    table.add_row("patterns extracted", str(summary.extracted))
    table.add_row("not silent-bug reports", str(summary.not_silent))
    for name, count in sorted(summary.false_alarms.items()):
        table.add_row(f"false alarm: {name}", str(count))
    table.add_row("errors", str(summary.errors))
    table.add_row("API semantics written", str(summary.semantics_written))
    if summary.extractor != "offline":
        table.add_row("LLM calls (cache hits)", f"{summary.llm_calls} ({summary.cache_hits})")
        table.add_row("tokens (prompt + completion)", f"{summary.prompt_tokens} + {summary.completion_tokens}")
        table.add_row("cost", "unknown" if summary.cost_usd is None else f"${summary.cost_usd:.6f}")
    if summary.no_pattern:
        table.add_row("no pattern in the report", str(summary.no_pattern))
    rec = summary.recordings
    if rec:
        line = f"{rec['ran']} run, {rec['reused']} reused, {rec['not_run']} not run, {rec['left']} left"
        table.add_row("repros recorded (sandboxed)", line)
    if summary.stopped:
        table.add_row("stopped", "LLM budget spent" if summary.budget_exhausted else "LLM endpoint down")
    Console().print(table)
    if rec and rec.get("reason"):
        Console(stderr=True).print(f"repros not recorded: {markup_safe(rec['reason'])}", highlight=False,
                                   soft_wrap=True)
    for sample in summary.error_samples[:5]:
        Console(stderr=True).print(f"error {markup_safe(sample['issue'])}: {markup_safe(sample['error'])}",
                                   highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("extract")(extract)
