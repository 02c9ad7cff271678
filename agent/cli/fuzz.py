"""`transfuzz fuzz`: the pending-harness campaign, plus `fuzz api` and `fuzz model`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from agent.cli.ci_opts import AllowErrorsOpt, ExecutorOpt, FailOnOpt, JunitOpt, RayAddressOpt, SarifOpt
from agent.cli.context import EXIT_FAILURE, EXIT_USAGE, fail, get_ctx
from agent.cli.sandbox_opt import NoSandboxOpt, sandbox_required

fuzz_app = typer.Typer(help="Run harnesses through the fuzz core.", invoke_without_command=True)

BudgetOpt = Annotated[str, typer.Option("--budget", help="Time for the whole campaign: 90s, 10m, 1h.")]
WorkersOpt = Annotated[int, typer.Option("--workers", min=1, max=64, help="Sandboxed worker processes.")]
SamplingOpt = Annotated[float, typer.Option("--sampling", min=0.0, max=1.0, help="Fraction of pending harnesses to run (seeded).")]
Precision = Literal["full", "half", "mixed"]  # agent.harness.generate.PRECISIONS (tests/agent/cli ties them)
PrecisionOpt = Annotated[Precision, typer.Option("--precision", help="full (float32), half (float16) or mixed (float32 + bfloat16) inputs.")]
InstrumentOpt = Annotated[str, typer.Option("--instrument", help="none, module, op or kernel: op-level coverage guidance "
                                            "and, on a confirmed finding, localisation and traces at this level.")]
MinInputsOpt = Annotated[int, typer.Option("--min-inputs", min=1, help="Compared inputs a pass needs; fewer is "
                                           "'inconclusive' and retried by the next fuzz.")]
MaxExecutionsOpt = Annotated[int | None, typer.Option("--max-executions", min=1, help="At most this many inputs per "
                              "harness; a campaign whose harnesses all reach it ends before its --budget, which "
                              "stays a cap.")]
SchedulerOpt = Annotated[str, typer.Option("--scheduler", help="halving (probe every harness, then more time to those "
                                           "with signal) or even (the same share for every harness).")]


def campaign_config(budget: str, workers: int, sampling: float, precision: str, seed: int = 0,
                    workdir: str | None = None, no_sandbox: bool = False, *, instrument: str = "op",
                    min_inputs: int = 50, scheduler: str = "halving",
                    max_executions: int | None = None):  # type: ignore[no-untyped-def]
    """Validate the campaign options; exit 2 with one line on a bad value."""
    from agent.campaign.stage import CampaignConfig
    from agent.cli.budget import parse_budget

    try:
        parsed = parse_budget(budget)
        if parsed.seconds is None:
            raise ValueError(f"budget {budget!r}: a campaign budget is a duration (90s, 10m, 1h)")
        config = CampaignConfig(budget_s=parsed.seconds, workers=workers, sampling=sampling,
                                precision=precision, seed=seed, instrument=instrument, min_inputs=min_inputs,
                                max_executions=max_executions,
                                scheduler=scheduler,
                                workdir=str(Path(workdir).expanduser().resolve()) if workdir else None)
        config.validate()
    except ValueError as exc:
        fail(str(exc), code=EXIT_USAGE)
    config.sandbox = sandbox_required(no_sandbox)
    return config


@fuzz_app.callback()
def fuzz(
    ctx: typer.Context,
    budget: BudgetOpt = "10m",
    workers: WorkersOpt = 2,
    sampling: SamplingOpt = 1.0,
    precision: PrecisionOpt = "full",
    seed: Annotated[int, typer.Option("--seed")] = 0,
    stale_after: Annotated[float, typer.Option("--stale-after", min=1.0,
        help="Seconds without a heartbeat after which another campaign counts as dead and its harnesses are retried.")] = 60.0,
    no_sandbox: NoSandboxOpt = False,
    instrument: InstrumentOpt = "op",
    min_inputs: MinInputsOpt = 50,
    max_executions: MaxExecutionsOpt = None,
    scheduler: SchedulerOpt = "halving",
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
    fail_on: FailOnOpt = None,
    allow_errors: AllowErrorsOpt = False,
    junit: JunitOpt = None,
    sarif: SarifOpt = None,
) -> None:
    """Run pending harnesses through the worker pool; findings are stored as they come.

    In CI: --fail-on confirmed exits 1 when the run confirms a finding, a harness errors or no input runs
    (--allow-errors accepts the last two); --junit/--sarif write result files."""
    if ctx.invoked_subcommand is not None:
        return
    from agent.cli.ci_opts import apply_executor, campaign_errors, check_gate, ci_results
    from agent.pipeline import fuzz_stage

    cli = get_ctx(ctx)
    config = campaign_config(budget, workers, sampling, precision, seed, cli.settings.artifacts_dir, no_sandbox,
                             instrument=instrument, min_inputs=min_inputs, scheduler=scheduler,
                             max_executions=max_executions)
    config.stale_after_s = stale_after
    config.heartbeat_s = min(config.heartbeat_s, stale_after / 3)  # a live driver never looks stale to another
    apply_executor(config, executor, ray_address)
    check_gate(fail_on, allow_errors)
    store = cli.store()
    with campaign_errors():
        result = fuzz_stage(store, config, err=None if cli.json else cli.err)
    gate_failed = ci_results(store, result.get("run_id"), fail_on=fail_on, junit=junit, sarif=sarif, err=cli.err,
                             allow_errors=allow_errors)
    if cli.json:
        from agent.cli.stage_docs import FuzzOutput

        cli.emit(FuzzOutput.model_validate(result))
    else:
        verdicts = ", ".join(f"{k}: {v}" for k, v in sorted(result["verdicts"].items())) or "none"
        typer.echo(f"run {result['run_id']}: {result['exit_reason']}; {result['harnesses']} harnesses, "
                   f"{result['executions']} executions, {result['left_pending']} left pending; verdicts: {verdicts}")
    if gate_failed:
        raise typer.Exit(EXIT_FAILURE)


def _register() -> None:
    from agent.cli.fuzz_api import fuzz_api
    from agent.cli.fuzz_model import fuzz_model

    fuzz_app.command("api")(fuzz_api)
    fuzz_app.command("model")(fuzz_model)


_register()
