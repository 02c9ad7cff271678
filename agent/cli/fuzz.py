"""`transfuzz fuzz`: the pending-harness campaign, plus `fuzz api` and `fuzz model`."""

from __future__ import annotations

import typer

from agent.cli.context import not_built

fuzz_app = typer.Typer(help="Run harnesses through the fuzz core.", invoke_without_command=True)


@fuzz_app.callback()
def fuzz(ctx: typer.Context) -> None:
    """Run pending harnesses through the worker pool (the pipeline's fuzz stage)."""
    if ctx.invoked_subcommand is None:
        not_built("fuzz")


def _register() -> None:
    try:
        from agent.cli.fuzz_api import fuzz_api
    except ImportError:
        fuzz_api = None
    if fuzz_api is not None:
        fuzz_app.command("api")(fuzz_api)
    else:
        @fuzz_app.command("api")
        def _api_missing() -> None:
            """Fuzz one API with one pattern's mode pair (no pipeline needed)."""
            not_built("fuzz api")

    try:
        from agent.cli.fuzz_model import fuzz_model
    except ImportError:
        fuzz_model = None
    if fuzz_model is not None:
        fuzz_app.command("model")(fuzz_model)
    else:
        @fuzz_app.command("model")
        def _model_missing() -> None:
            """Coverage-guided fuzzing of an nn.Module."""
            not_built("fuzz model")


_register()
