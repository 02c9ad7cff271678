"""`transfuzz run SOURCE`: the main job — ingest → extract → transfer → fuzz → summary."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from agent.cli.context import EXIT_FAILURE, EXIT_USAGE, fail, get_ctx
from agent.cli.llm_opts import LlmBudgetOpt, LlmOpt, LlmTimeoutOpt, ModelOpt, llm_settings, make_cli_backend
from agent.text_safety import rich_text
from agent.cli.json_out import format_measure
from agent.cli.run_summary import RunSummary, TopFinding
from agent.cli.fuzz import (BudgetOpt, InstrumentOpt, MaxExecutionsOpt, MinInputsOpt, PrecisionOpt, SamplingOpt, SchedulerOpt, WorkersOpt,
                            campaign_config)
from agent.cli.ingest_cmd import CommentsOpt, LabelOpt, SinceOpt, StateOpt
from agent.cli.ci_opts import (AllowErrorsOpt, ExecutorOpt, FailOnOpt, JunitOpt, RayAddressOpt, SarifOpt,
                               apply_executor, campaign_errors, check_gate, ci_results)
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
    label: LabelOpt = None,
    state: StateOpt = "all",
    since: SinceOpt = None,
    comments: CommentsOpt = False,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    no_sandbox: NoSandboxOpt = False,
    instrument: InstrumentOpt = "op",
    min_inputs: MinInputsOpt = 50,
    max_executions: MaxExecutionsOpt = None,
    scheduler: SchedulerOpt = "halving",
    llm: LlmOpt = None,
    model: ModelOpt = None,
    llm_budget: LlmBudgetOpt = None,
    llm_timeout: LlmTimeoutOpt = None,
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
    fail_on: FailOnOpt = None,
    allow_errors: AllowErrorsOpt = False,
    junit: JunitOpt = None,
    sarif: SarifOpt = None,
) -> None:
    """Ingest → extract → transfer → fuzz, then print a summary table; --budget bounds the whole run.

    From the real tracker (token in GITHUB_TOKEN; see `transfuzz ingest github --help` for rate limits):
    transfuzz run github:pytorch/pytorch --label "module: correctness (silent)" --since 2025-01-01 --limit 200
    """
    from agent.pipeline import extract_stage, fuzz_stage, ingest_stage, summary, transfer_stage

    import time

    started = time.monotonic()
    cli = get_ctx(ctx)
    filters = _ingest_filters(source, label, state, since, comments)
    config = campaign_config(budget, workers, sampling, precision, seed, cli.settings.artifacts_dir, no_sandbox,
                             instrument=instrument, min_inputs=min_inputs, scheduler=scheduler,
                             max_executions=max_executions)
    apply_executor(config, executor, ray_address)
    check_gate(fail_on, allow_errors)
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
        stages["ingest"] = ingest_stage(store, settings, source, limit=limit, filters=filters)
        _refuse_a_file_that_is_not_json(source, stages["ingest"])
        err.rule("extract")
        # the reports' repros run under the recorder (sandboxed) within a tenth of the run's budget
        from agent.cli.extract_cmd import recording_options

        record_s = settings.record_budget_s if whole_budget_s is None else min(settings.record_budget_s,
                                                                                0.1 * whole_budget_s)
        stages["extract"] = extract_stage(store, settings, llm_backend=backend,
                                          recording=recording_options(record_s, sandbox=not no_sandbox,
                                                                      workers=workers))
        err.rule("transfer")
        stages["transfer"] = transfer_stage(store, settings, top_k=top_k, limit=limit, err=err, llm_backend=backend)
        err.rule("fuzz")
        # The budget covers the whole run: fuzzing gets what ingest, extract and transfer left,
        # less a reserve for the harnesses in flight when it runs out.
        spent = time.monotonic() - started
        config.budget_s = max(MIN_FUZZ_S, whole_budget_s - spent - max(5.0, 0.1 * whole_budget_s))
        with campaign_errors():
            stages["fuzz"] = fuzz_stage(store, config, err=None if cli.json else err)
    except (ValueError, FileNotFoundError, LlmConfigError) as exc:
        fail(str(exc), code=EXIT_USAGE)
    from agent.cli.run_summary import RunOutput, build_run_summary, db_option

    this_run = build_run_summary(store, stages, elapsed_s=time.monotonic() - started, db_option=db_option(store.url))
    if cli.json:
        cli.emit(RunOutput(run=this_run, stages=stages, summary=summary(store)))
    else:
        print_summary(this_run)
    gate_failed = ci_results(store, stages["fuzz"].get("run_id"), fail_on=fail_on, junit=junit, sarif=sarif, err=err,
                             source_uri=None if source.startswith("github:") else source, allow_errors=allow_errors)
    breaker = getattr(backend, "breaker", None)
    _report_llm_stop(err, stages, endpoint_down=bool(breaker is not None and breaker.open))
    if gate_failed:
        raise typer.Exit(EXIT_FAILURE)


def _refuse_a_file_that_is_not_json(source: str, ingested: dict[str, Any]) -> None:
    from agent.cli.ingest_cmd import not_json_reason
    from agent.ingest import IngestSummary

    reason = not_json_reason(source, IngestSummary.model_validate(ingested))
    if reason is not None:
        fail(reason, code=EXIT_USAGE)


def _ingest_filters(source: str, label: list[str] | None, state: str, since: str | None,
                   comments: bool) -> dict[str, Any]:
    """The GitHub filters for ingest_source; exit 2 when they are given for a dump file or malformed."""
    from agent.cli.ingest_cmd import parse_since
    from agent.ingest import GITHUB_PREFIX

    if not source.startswith(GITHUB_PREFIX):
        given = [name for name, used in (("--label", label), ("--state", state != "all"), ("--since", since),
                                         ("--comments", comments)) if used]
        if given:
            verb = "filters" if len(given) == 1 else "filter"
            fail(f"{', '.join(given)} {verb} GitHub issues only: give a source such as github:pytorch/pytorch "
                 f"(a dump file is ingested whole)", code=EXIT_USAGE)
        return {}
    try:
        since_at = parse_since(since) if since is not None else None
    except ValueError as exc:
        fail(str(exc), code=EXIT_USAGE)
    return {"labels": list(label or []), "state": state, "since": since_at, "comments": comments}


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


def print_summary(this_run: RunSummary) -> None:
    """The run's figures, its top findings and the next commands (tables fit the terminal; piped: COLUMNS or 80)."""
    from agent.cli.terminal import output_console

    console = output_console()
    stage = this_run.stages
    table = Table(title=f"TransFuzz run {this_run.run_id if this_run.run_id is not None else ''}".rstrip())
    table.add_column("this run")
    table.add_column("count", justify="right")
    rows = [
        ("elapsed", f"{this_run.elapsed_s:.0f} s"),
        ("issues new / updated / unchanged", f"{stage.issues_new} / {stage.issues_updated} / {stage.issues_unchanged}"),
        ("bad records skipped", str(stage.bad_records)),
        ("issues extracted", str(stage.issues_extracted)),
        ("silent-bug patterns", str(stage.silent_bug_patterns)),
        ("false alarms / not silent", f"{stage.false_alarms} / {stage.not_silent}"),
        ("patterns transferred", str(stage.patterns_transferred)),
        ("candidates (vetoed)", f"{stage.candidates} ({stage.vetoed})"),
        ("harnesses generated", str(stage.harnesses_generated)),
        ("harnesses fuzzed / left pending", f"{stage.harnesses_fuzzed} / {stage.harnesses_left_pending}"),
        ("executions", str(stage.executions)),
        ("fuzz stopped", this_run.fuzz_exit_reason or "-"),
    ]
    for label, value in rows:
        table.add_row(label, value)
    for verdict, count in this_run.verdicts.items():
        table.add_row(f"verdict: {verdict}", str(count))
    for reason in this_run.not_applicable:
        table.add_row(rich_text(f"  not_applicable: {reason.reason}"), str(reason.count))
    if "inconclusive" not in this_run.verdicts:
        table.add_row("verdict: inconclusive", "0")
    console.print(table)
    for title, found in (("Confirmed findings of this run", this_run.top_confirmed),
                         ("Suspicious findings of this run", this_run.top_suspicious)):
        if found:
            _print_findings(console, title, found)
    totals = this_run.database_totals
    console.print(f"database: {totals['issues']} issues, {totals['patterns']} patterns, {totals['harnesses']} harnesses "
                  f"({totals['harnesses_pending']} pending), {totals['findings']} findings in all runs",
                  highlight=False, markup=False, soft_wrap=True)
    console.print("next:", highlight=False, markup=False)
    for step in this_run.next_steps:  # whole lines: a command broken in two cannot be pasted
        console.print(rich_text(f"  {step}"), highlight=False, soft_wrap=True)


def _print_findings(console: Console, title: str, found: list[TopFinding]) -> None:
    from agent.cli.terminal import short_names

    table = Table(title=title)
    for column in ("id", "api", "kind", "modes", "max |diff|", "from"):
        table.add_column(column, overflow="fold", justify="right" if column == "id" else "left")
    apis = short_names([row.api for row in found], 28)
    for row, api in zip(found, apis):
        table.add_row(str(row.finding), rich_text(api), rich_text(row.kind or "-"), rich_text(row.modes),
                      format_measure(row.max_abs_diff),
                      "re-check" if row.is_source_recheck else rich_text(row.source_issue or "-"))
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command("run")(run)


__all__ = ["EXIT_USAGE", "register", "run"]
