"""`transfuzz run SOURCE`: the main job — ingest → extract → transfer → fuzz → summary."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from agent.cli.context import EXIT_FAILURE, EXIT_USAGE, fail, get_ctx
from agent.cli.llm_opts import LlmBudgetOpt, LlmOpt, LlmTimeoutOpt, ModelOpt, llm_settings, make_cli_backend
from agent.text_safety import rich_text
from agent.cli.fuzz import BudgetOpt, PrecisionOpt, SamplingOpt, WorkersOpt, campaign_config
from agent.cli.sandbox_opt import NoSandboxOpt


MIN_FUZZ_S = 15.0


def run(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="An issue dump file, or github:OWNER/REPO.")],
    budget: BudgetOpt = "3m",
    workers: WorkersOpt = 2,
    sampling: SamplingOpt = 1.0,
    precision: PrecisionOpt = "full",
    top_k: Annotated[int, typer.Option("--top-k", min=1, max=50, help="Target APIs per pattern.")] = 5,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most this many issues (GitHub) / patterns.")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    no_sandbox: NoSandboxOpt = False,
    llm: LlmOpt = None,
    model: ModelOpt = None,
    llm_budget: LlmBudgetOpt = None,
    llm_timeout: LlmTimeoutOpt = None,
) -> None:
    """Ingest → extract → transfer → fuzz, then print a summary table; --budget bounds the whole run."""
    from agent.pipeline import extract_stage, fuzz_stage, ingest_stage, summary, transfer_stage

    import time

    started = time.monotonic()
    cli = get_ctx(ctx)
    config = campaign_config(budget, workers, sampling, precision, seed, cli.settings.artifacts_dir, no_sandbox)
    whole_budget_s = config.budget_s
    settings = llm_settings(cli.settings, llm, model, llm_budget, llm_timeout)
    store = cli.store()
    backend = make_cli_backend(settings, store)  # one backend: one LLM budget for every stage
    if whole_budget_s is not None and getattr(backend, "budget", None) is not None:
        # LLM stages stop in time to leave the fuzz stage its minimum (what is left stays due)
        backend.budget.set_deadline(max(1.0, whole_budget_s - MIN_FUZZ_S - max(5.0, 0.1 * whole_budget_s)))
    err = cli.err
    from agent.llm.errors import LlmConfigError

    try:
        stages: dict[str, Any] = {}
        err.rule("ingest")
        stages["ingest"] = ingest_stage(store, settings, source, limit=limit)
        err.rule("extract")
        stages["extract"] = extract_stage(store, settings, llm_backend=backend)
        err.rule("transfer")
        stages["transfer"] = transfer_stage(store, settings, top_k=top_k, limit=limit, err=err, llm_backend=backend)
        err.rule("fuzz")
        # The budget covers the whole run: fuzzing gets what ingest, extract and transfer left,
        # less a reserve for the harnesses in flight when it runs out.
        spent = time.monotonic() - started
        config.budget_s = max(MIN_FUZZ_S, whole_budget_s - spent - max(5.0, 0.1 * whole_budget_s))
        stages["fuzz"] = fuzz_stage(store, config, err=None if cli.json else err)
    except (ValueError, FileNotFoundError, LlmConfigError) as exc:
        fail(str(exc), code=EXIT_USAGE)
    result = summary(store)
    if cli.json:
        cli.emit({"stages": stages, "summary": result})
    else:
        print_summary(result, stages)
    breaker = getattr(backend, "breaker", None)
    _report_llm_stop(err, stages, endpoint_down=bool(breaker is not None and breaker.open))


def _report_llm_stop(err: Console, stages: dict[str, Any], *, endpoint_down: bool) -> None:
    """One line per LLM stage that stopped early; an endpoint that is down fails the run (rc 1)."""
    from agent.text_safety import markup_safe

    stops = [("extract", stages.get("extract", {}).get("stopped")),
             ("transfer", stages.get("transfer", {}).get("llm_stopped"))]
    for stage, reason in stops:
        if reason:
            err.print(f"{stage} stopped early: {markup_safe(reason)}", highlight=False, soft_wrap=True)
    if endpoint_down:
        raise typer.Exit(EXIT_FAILURE)


def print_summary(result: dict[str, Any], stages: dict[str, Any]) -> None:
    console = Console()
    if not console.is_terminal:  # logs and CI: never cut API names and issue links to 80 columns
        console = Console(width=160)
    table = Table(title="TransFuzz run")
    table.add_column("stage")
    table.add_column("count", justify="right")
    for label, key in [("issues", "issues"), ("silent-bug reports", "silent_bug_reports"),
                       ("false alarms", "false_alarms"), ("patterns", "patterns"),
                       ("candidates (transferred)", "candidates"), ("vetoed", "vetoed"),
                       ("harnesses", "harnesses"), ("harnesses left pending", "harnesses_pending")]:
        table.add_row(label, str(result[key]))
    for verdict, count in result["verdicts"].items():
        table.add_row(f"verdict: {verdict}", str(count))
    rechecks = result.get("source_rechecks", {})
    table.add_row("reported bugs still reproducing", f"{rechecks.get('True', 0)} yes, {rechecks.get('False', 0)} no, "
                                                     f"{rechecks.get('None', 0)} inconclusive")
    transfer = stages.get("transfer", {})
    if transfer.get("harnesses_with_llm_inputs") or transfer.get("llm_inputs_rejected"):
        table.add_row("LLM input descriptions used / rejected",
                      f"{transfer.get('harnesses_with_llm_inputs', 0)} / {transfer.get('llm_inputs_rejected', 0)}")
    fuzz = stages.get("fuzz", {})
    table.add_row("fuzz exit reason", str(fuzz.get("exit_reason", "-")))
    table.add_row("fuzz executions", str(fuzz.get("executions", 0)))
    console.print(table)
    for title, key in (("Top confirmed findings", "top_confirmed"), ("Top suspicious findings", "top_suspicious")):
        rows = result[key]
        if not rows:
            continue
        found = Table(title=title)
        for column in ("finding", "api", "kind", "modes", "max |diff|", "from issue", "note"):
            found.add_column(column, overflow="fold")
        for row in rows:
            diff = row["max_abs_diff"]
            found.add_row(str(row["finding"]), rich_text(row["api"]), rich_text(row["kind"]), rich_text(row["modes"]),
                          f"{diff:.3g}" if isinstance(diff, (int, float)) else rich_text(diff or "-"),
                          rich_text(row["source_issue"] or ""),
                          "source re-check" if row["is_source_recheck"] else "transferred")
        console.print(found)


def register(app: typer.Typer) -> None:
    app.command("run")(run)


__all__ = ["EXIT_USAGE", "register", "run"]
