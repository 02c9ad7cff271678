"""`transfuzz fuzz model`: coverage-guided fuzzing of a user's nn.Module (TensorFuzz-style)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.cli.budget import parse_budget
from agent.cli.context import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, fail, get_ctx

# Executions when the budget is a duration: the clock stops the search first.
_UNLIMITED_EXECUTIONS = 10**12
OBJECTIVE_HELP = "nan | disagree:float16 | disagree:bfloat16 | disagree:quantized | disagree:compile"


class FuzzModelOptions(BaseModel):
    """Validated command-line options (the boundary between the user and fuzz_core)."""

    model_config = ConfigDict(extra="forbid")

    target: str
    objective: Literal["nan", "disagree:float16", "disagree:bfloat16", "disagree:quantized",
                       "disagree:compile", "disagree:against"]
    coverage_layers: list[str]
    coverage: Literal["activations", "abs_sum"]
    max_mutations: int = Field(gt=0)
    time_budget_s: float | None = Field(default=None, gt=0)
    batch: int = Field(gt=0)
    threshold: float = Field(ge=0)
    sampler: Literal["recent", "uniform"]
    sigma: float = Field(gt=0)
    input_range: tuple[float, float] | None
    radius: float | None = Field(default=None, gt=0)
    compare: Literal["argmax", "close"]
    instrument: Literal["none", "module", "op", "kernel"]
    backend: str
    bisector: bool
    special: float = Field(ge=0, le=1)
    baseline: bool
    seed: int


def _parse_range(text: str | None) -> tuple[float, float] | None:
    if text is None or text == "auto":
        return None
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        fail(f"--input-range {text!r}: use LO,HI such as -1,1", code=EXIT_USAGE)
    if not lo < hi:
        fail(f"--input-range {text!r}: LO must be below HI", code=EXIT_USAGE)
    return lo, hi


def _parse_shape(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(v) for v in text.split(","))
    except ValueError:
        fail(f"--input-shape {text!r}: use comma-separated sizes such as 1,3,32,32", code=EXIT_USAGE)
    if not shape or any(s <= 0 for s in shape):
        fail(f"--input-shape {text!r}: sizes must be positive", code=EXIT_USAGE)
    return shape


def fuzz_model(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(help="FILE.py:FACTORY; FACTORY() returns an nn.Module or (module, example batch).")],
    objective: Annotated[str | None, typer.Option("--objective", "-o", help=OBJECTIVE_HELP + " (default nan; with --against, disagreement of the two models).")] = None,
    against: Annotated[str | None, typer.Option("--against", help="Version regression: FILE.py:FACTORY of the other model, or a state_dict checkpoint (.pt) for the same architecture.")] = None,
    coverage_layers: Annotated[list[str] | None, typer.Option("--coverage-layers", "-l", help="Qualified module names whose activations are the coverage (repeat or comma-separate); default: the model output.")] = None,
    coverage: Annotated[str, typer.Option("--coverage", help="activations (raw vectors) | abs_sum (summed magnitude, TensorFuzz's NaN set-up).")] = "activations",
    budget: Annotated[str, typer.Option("--budget", "-b", help="Mutations like 5000x, or a duration like 60s / 2m.")] = "5000x",
    batch: Annotated[int, typer.Option("--batch", help="Mutants made from each sampled corpus element.")] = 100,
    threshold: Annotated[float, typer.Option("--threshold", help="ANN novelty threshold (squared L2 distance).")] = 0.5,
    sampler: Annotated[str, typer.Option("--sampler", help="recent | uniform corpus sampling.")] = "recent",
    sigma: Annotated[float, typer.Option("--sigma", help="Std-dev of the gaussian mutation.")] = 0.2,
    input_range: Annotated[str | None, typer.Option("--input-range", help="LO,HI bounds for inputs; 'auto': the example's min/max.")] = "auto",
    radius: Annotated[float | None, typer.Option("--radius", help="L∞ radius around the seed inputs (clipped mutation).")] = None,
    input_shape: Annotated[str | None, typer.Option("--input-shape", help="Batch-first shape of random seeds, when the factory gives no example.")] = None,
    compare: Annotated[str, typer.Option("--compare", help="Disagreement test: argmax (predicted class) | close (per-dtype tolerance).")] = "argmax",
    instrument: Annotated[str, typer.Option("--instrument", help="none | module | op | kernel: record every execution at this level.")] = "none",
    backend: Annotated[str, typer.Option("--backend", help="torch.compile backend for disagree:compile.")] = "inductor",
    bisector: Annotated[bool, typer.Option("--bisector/--no-bisector", help="disagree:compile: also run PyTorch's CompilerBisector on the failing input (slow).")] = False,
    special: Annotated[float, typer.Option("--special", help="Share of mutation batches that write finite special values (denormal, huge, tiny, -0.0).")] = 0.0,
    baseline: Annotated[bool, typer.Option("--baseline/--no-baseline", help="Also run random search with the same budget.")] = False,
    save_input: Annotated[Path | None, typer.Option("--save-input", help="Write the failing input (a tensor) to this .pt file.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed for mutations and sampling.")] = 0,
) -> None:
    """Coverage-guided fuzzing of an nn.Module: NaNs, precision/quantisation/compile disagreements, regressions.

    Exit 1 when an input meeting the objective was found, 0 when the budget ran out without one.
    """
    cli = get_ctx(ctx)
    if objective is None:
        objective = "disagree:against" if against else "nan"
    elif against is not None and objective != "disagree:against":
        fail("--against compares two models; leave --objective unset (or disagree:against)", code=EXIT_USAGE)
    elif objective == "disagree:against" and against is None:
        fail("disagree:against needs --against FILE.py:FACTORY or a checkpoint", code=EXIT_USAGE)
    try:
        parsed_budget = parse_budget(budget)
    except ValueError as exc:
        fail(str(exc), code=EXIT_USAGE)
    layers = [name.strip() for item in (coverage_layers or []) for name in item.split(",") if name.strip()]
    try:
        options = FuzzModelOptions(
            target=target, objective=objective, coverage_layers=layers, coverage=coverage,
            max_mutations=parsed_budget.executions or _UNLIMITED_EXECUTIONS,
            time_budget_s=parsed_budget.seconds, batch=batch, threshold=threshold, sampler=sampler,
            sigma=sigma, input_range=_parse_range(input_range), radius=radius, compare=compare,
            instrument=instrument, backend=backend, bisector=bisector, special=special, baseline=baseline,
            seed=seed,
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        fail(f"--{where.replace('_', '-')}: {err['msg']}", code=EXIT_USAGE)

    from fuzz_core.cgf.model import ModelLoadError, call_factory, load_checkpoint, load_factory

    try:
        # The user's own model file: it runs here, in the CLI process, as their code.
        loaded = call_factory(load_factory(options.target))
        other = None
        if against is not None:
            if against.endswith((".pt", ".pth", ".ckpt")) and ":" not in Path(against).name:
                other = load_checkpoint(loaded.model, against)
            else:
                other = call_factory(load_factory(against)).model
    except ModelLoadError as exc:
        fail(str(exc), code=EXIT_USAGE)

    seeds = _seeds(loaded.example, input_shape, options.seed)
    report = _run(options, loaded.model, seeds, other, cli)
    result = report.result
    if save_input is not None and result.failing_input is not None:
        import torch

        torch.save(result.failing_input.unsqueeze(0), save_input)
    out = report.to_dict()
    out["target"] = options.target
    out["against"] = against
    if save_input is not None and result.failing_input is not None:
        out["saved_input"] = str(save_input)
    if cli.json:
        cli.emit(out)
    else:
        _print_human(cli, out)
    raise typer.Exit(EXIT_FAILURE if result.found else EXIT_OK)


def _seeds(example: torch.Tensor | None, input_shape: str | None, seed: int) -> torch.Tensor:
    import torch

    if input_shape is not None:
        gen = torch.Generator().manual_seed(seed)
        return torch.randn(_parse_shape(input_shape), generator=gen)
    if example is None:
        fail("the factory returned no example input; return (model, example batch) or pass --input-shape",
             code=EXIT_USAGE)
    if example.dim() == 0:
        fail("the example input must be batch-first (at least one dimension)", code=EXIT_USAGE)
    return example.detach().clone()


def _run(options: FuzzModelOptions, model: torch.nn.Module, seeds: torch.Tensor,
         other: torch.nn.Module | None, cli):  # type: ignore[no-untyped-def]
    import torch

    from fuzz_core.cgf.loop import CgfConfig
    from fuzz_core.cgf.model import ModelFuzzConfig
    from fuzz_core.cgf.model import fuzz_model as run_model_fuzz
    from fuzz_core.cgf.mutations import GaussianMutation, InputDomain, SpecialValueMutation, WeightedMutations

    lo_hi = options.input_range
    if lo_hi is None and seeds.is_floating_point():
        lo, hi = float(seeds.min()), float(seeds.max())
        lo_hi = (lo, hi) if lo < hi else None  # a constant example says nothing about the range
    domain = InputDomain(a_min=lo_hi[0] if lo_hi else None, a_max=lo_hi[1] if lo_hi else None,
                         constraint=options.radius)
    mutation = GaussianMutation(sigma=options.sigma)
    if options.special > 0:
        mutation = WeightedMutations([mutation, SpecialValueMutation()], [1.0 - options.special, options.special])
    config = ModelFuzzConfig(
        objective=options.objective, coverage_layers=options.coverage_layers, coverage=options.coverage,
        compare=options.compare, instrument=options.instrument, compile_backend=options.backend,
        compiler_bisector=options.bisector, baseline=options.baseline,
        cgf=CgfConfig(max_mutations=options.max_mutations, mutations_per_item=options.batch,
                      threshold=options.threshold, sampler=options.sampler, domain=domain,
                      mutation=mutation, time_budget_s=options.time_budget_s,
                      seed=options.seed),
    )
    torch.manual_seed(options.seed)
    try:
        return run_model_fuzz(model, seeds, config, against=other)
    except ValueError as exc:  # bad layer name, shape mismatch reported by fuzz_core
        fail(str(exc).splitlines()[0], code=EXIT_USAGE)
    except RuntimeError as exc:  # the model cannot run on these inputs
        fail(f"the model failed on the seed inputs: {str(exc).splitlines()[0]}", code=EXIT_USAGE)


def _print_human(cli, out: dict) -> None:  # type: ignore[no-untyped-def]
    err = cli.err
    if out["found"]:
        err.print(f"[bold red]found[/] {out['objective']} after {out['mutations_to_first']} mutations "
                  f"({out['generations']} generations from seed {out['failing_seed_index']}, "
                  f"corpus {out['corpus_size']}, {out['elapsed_s']} s)")
    else:
        err.print(f"no input met {out['objective']} in {out['executions']} mutations "
                  f"(corpus {out['corpus_size']}, stopped by {out['stop_reason']}, {out['elapsed_s']} s)")
    from fuzz_core.evidence import Evidence

    localisation = Evidence.of(out["evidence"]).localisation
    for key, value in (localisation.to_dict() if localisation is not None else {}).items():
        if isinstance(value, dict):
            name = value.get("name") or value.get("op") or value.get("first_bad_backend")
            err.print(f"  {key}: {name}")
        elif value:
            err.print(f"  {key}: {value}")
    if "random_baseline" in out:
        rb = out["random_baseline"]
        err.print(f"random search, same budget: {'found after ' + str(rb['mutations_to_first']) if rb['found'] else 'nothing'}"
                  f" in {rb['executions']} mutations")
    if out.get("saved_input"):
        err.print(f"failing input saved to {out['saved_input']}")
