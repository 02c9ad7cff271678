"""`transfuzz fuzz api API --pattern KIND`: fuzz one API with one pattern's mode pair, no database needed."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from agent.cli.json_out import Measure, Versioned

from agent.cli.budget import parse_budget
from agent.cli.context import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, fail, get_ctx
from agent.cli.fuzz import MinInputsOpt
from agent.cli.sandbox_opt import NoSandboxOpt, sandbox_required
from fuzz_core.kinds import KIND_MODE_PAIRS

LOW_DTYPES = ("float16", "bfloat16")
FINDING_VERDICTS = ("confirmed", "crash", "hang", "error")


class FuzzApiOutput(Versioned):
    """The one JSON object `--json` prints."""

    api: str
    pattern: str
    modes: list[str]
    dtype: str
    verdict: str
    executions: int
    max_abs_diff: Measure
    max_rel_diff: Measure
    reason: str
    repro: str | None
    inputs_path: str | None
    elapsed_s: float
    signature: str
    exit_reason: str


def _build_spec(api: str, kind: str, dtype: str | None, backend: str | None, seed: int,
                mutate: str = "all") -> Any:
    from fuzz_core.kinds import KIND_MODE_PAIRS, oracle_for_kind
    from fuzz_core.spec import HarnessSpec

    reference, test = KIND_MODE_PAIRS[kind]
    input_dtype = "float32"
    if kind == "Precision_Mismatch" and dtype is not None:
        if dtype not in LOW_DTYPES:
            fail(f"--dtype for Precision_Mismatch must be one of {', '.join(LOW_DTYPES)}", code=EXIT_USAGE)
        test = f"dtype:{dtype}"
    elif dtype is not None:
        import torch

        if not isinstance(getattr(torch, dtype, None), torch.dtype):
            fail(f"unknown dtype {dtype!r} (e.g. float32, float64, float16, bfloat16, int64)", code=EXIT_USAGE)
        input_dtype = dtype
    if backend is not None and kind == "Gradient_Mismatch":
        # gradients through compiled code against eager's (a custom autograd.Function's are only compared so)
        reference, test = "grad", f"grad:compile:{backend}"
    elif backend is not None:
        if not test.startswith("compile:"):
            fail(f"--backend applies to compile and gradient patterns; {kind} tests {test}", code=EXIT_USAGE)
        test = f"compile:{backend}"
    return HarnessSpec(api=api, reference_mode=reference, test_mode=test, input_source="opinfo",
                       oracle=oracle_for_kind(kind), dtype=input_dtype, seed=seed, kind=kind, mutate=mutate)


def fuzz_api(
    ctx: typer.Context,
    api: Annotated[str, typer.Argument(help="Qualified API name, e.g. torch.nn.functional.relu6 or torch.Tensor.add.")],
    pattern: Annotated[str, typer.Option("--pattern", "-p", help=f"Pattern kind: {', '.join(KIND_MODE_PAIRS)}.")] = (
        "Compile_Eager_Mismatch"),
    dtype: Annotated[str | None, typer.Option(help="Input dtype; for Precision_Mismatch the low dtype "
                                                   "(float16 or bfloat16).")] = None,
    backend: Annotated[str | None, typer.Option(help="Compile backend for compile patterns (eager, aot_eager, "
                                                     "inductor); with Gradient_Mismatch, gradients through "
                                                     "compiled code against eager gradients.")] = None,
    budget: Annotated[str, typer.Option(help="Time (60s, 2m) or executions (2000x).")] = "60s",
    seed: Annotated[int, typer.Option(help="Seed for inputs and mutations.")] = 0,
    out: Annotated[Path | None, typer.Option(help="Folder for inputs and repro scripts (default: a temp folder).")] = (
        None),
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    values_only: Annotated[bool, typer.Option("--values-only", help="Mutate values only: every input keeps its "
                                              "seed's shape, dtype and strides (compiled code compiles once "
                                              "per seed structure).")] = False,
    min_inputs: MinInputsOpt = 50,
    no_sandbox: NoSandboxOpt = False,
) -> None:
    """Fuzz one API with one pattern's mode pair (no pipeline, no database).

    Exit status: 0 when the run ends passed / inconclusive (fewer than --min-inputs compared) / suspicious /
    flaky / not applicable, 1 on a confirmed
    finding, crash, hang or harness error, 2 on a usage error.
    """
    cli = get_ctx(ctx)
    as_json = cli.json or json_output
    from fuzz_core.kinds import KIND_MODE_PAIRS, UnknownKind, resolve_kind
    from fuzz_core.api_names import rejection_reason
    from fuzz_core.target import near_apis

    try:
        kind = resolve_kind(pattern)
    except UnknownKind as exc:
        fail(str(exc), code=EXIT_USAGE)
    refused = rejection_reason(api)
    if refused is not None:
        near = near_apis(api)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        fail(f"API {api!r} rejected: {refused}{hint}", code=EXIT_USAGE)
    try:
        parsed = parse_budget(budget)
    except ValueError as exc:
        fail(str(exc), code=EXIT_USAGE)
    spec = _build_spec(api, kind, dtype, backend, seed, "values" if values_only else "all")
    from fuzz_core.modes import UnknownMode, get_mode

    try:
        get_mode(spec.test_mode, spec.mode_options)
    except UnknownMode as exc:
        fail(str(exc), code=EXIT_USAGE)
    sandbox = sandbox_required(no_sandbox)
    root = out if out is not None else Path(tempfile.mkdtemp(prefix="transfuzz_fuzz_api_"))
    if not as_json:
        from agent.text_safety import markup_safe

        cli.err.print(f"fuzzing {markup_safe(api)}: {spec.reference_mode} vs {spec.test_mode} ({markup_safe(kind)}),"
                      f" budget {markup_safe(budget)}", highlight=False)
    from fuzz_core.workers import WorkerPool

    # A pass needs min_inputs compared inputs, as in a campaign: a first compilation can take most of a short
    # budget, and a pass on the one input that ran after it would say nothing (Note [Earned passes]).
    with WorkerPool(1, task_timeout_s=300.0, workdir=root, preload_opinfo=True, sandbox=sandbox,
                    min_inputs=min_inputs) as pool:
        result = pool.submit(spec, budget_s=parsed.seconds, max_executions=parsed.executions).result()
    from fuzz_core.evidence import Evidence

    evidence = Evidence.of(result.evidence)
    repro_path = evidence.repro_path
    if repro_path is None and result.repro and evidence.inputs_path:
        repro_path = str(evidence.inputs_path).replace("inputs_", "repro_").replace(".pt", ".py")
    output = FuzzApiOutput(
        api=api, pattern=kind, modes=[spec.reference_mode, spec.test_mode],
        dtype=spec.test_mode.split(":", 1)[1] if spec.test_mode.startswith("dtype:") else spec.dtype,
        verdict=result.verdict, executions=result.executions, max_abs_diff=evidence.max_abs_diff,
        max_rel_diff=evidence.max_rel_diff, reason=result.reason,
        repro=repro_path if repro_path and Path(repro_path).exists() else None,
        inputs_path=evidence.inputs_path, elapsed_s=round(result.elapsed_s, 3), signature=result.signature,
        exit_reason=result.exit_reason,
    )
    if as_json:
        cli.emit(output.model_dump())
    else:
        from agent.text_safety import one_line

        typer.echo(f"verdict: {output.verdict}  ({one_line(output.reason)})")
        typer.echo(f"executions: {output.executions} in {output.elapsed_s:.1f} s (stopped: {output.exit_reason})")
        if output.max_abs_diff is not None:
            typer.echo(f"max abs diff: {output.max_abs_diff}  max rel diff: {output.max_rel_diff}")
        if output.repro:
            typer.echo(f"repro: python {output.repro}")
        if output.inputs_path:
            typer.echo(f"inputs: {output.inputs_path}")
        if KIND_MODE_PAIRS.get(kind) and evidence.backend_ablation is not None:
            typer.echo(f"backend ablation: {evidence.backend_ablation}")
    raise typer.Exit(EXIT_FAILURE if result.verdict in FINDING_VERDICTS else EXIT_OK)
