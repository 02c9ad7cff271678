"""`transfuzz export`: confirmed or accepted findings as reports ready to file, plus index.json."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent.cli.context import EXIT_FAILURE, EXIT_USAGE, fail, get_ctx
from agent.text_safety import markup_safe
from agent.cli.sandbox_opt import NoSandboxOpt, sandbox_required

FORMATS = ("markdown", "json")


def register(app: typer.Typer) -> None:
    app.command("export")(export)


def export(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", help="Directory for the reports (created if missing).")] = Path(
        "transfuzz-export"
    ),
    status: Annotated[
        str,
        typer.Option("--status", help="confirmed: verdict confirmed and not rejected; accepted: accepted in review."),
    ] = "confirmed",
    fmt: Annotated[str, typer.Option("--format", help="markdown or json (one file per signature group).")] = "markdown",
    check_repro: Annotated[
        bool,
        typer.Option(
            "--check-repro",
            help="Run every repro script in a sandboxed fresh interpreter; exit 1 if one contradicts its verdict.",
        ),
    ] = False,
    repro_timeout: Annotated[float, typer.Option("--repro-timeout", min=1.0, help="Seconds per repro script.")] = 120.0,
    no_sandbox: NoSandboxOpt = False,
) -> None:
    """Export findings as reports in the shape PyTorch asks of fuzzer-found bugs."""
    from agent.export.pipeline import EXPORT_STATUSES, export_findings
    from agent.export.writer import ExportError

    cli = get_ctx(ctx)
    if status not in EXPORT_STATUSES:
        fail(f"--status {status!r} is not one of {', '.join(EXPORT_STATUSES)}", code=EXIT_USAGE)
    if fmt not in FORMATS:
        fail(f"--format {fmt!r} is not one of {', '.join(FORMATS)}", code=EXIT_USAGE)
    sandbox = sandbox_required(no_sandbox) if check_repro else True
    store = cli.store(must_exist=True)
    problem = unwritable_reason(out)
    if problem is not None:
        fail(problem, code=EXIT_USAGE)
    try:
        index = export_findings(
            store, out, status=status, fmt=fmt, check_repro=check_repro, repro_timeout_s=repro_timeout,  # type: ignore[arg-type]
            sandbox=sandbox,
        )
    except ExportError as exc:
        fail(str(exc), code=EXIT_USAGE)
    if cli.json:
        from agent.cli.stage_docs import ExportOutput

        cli.emit(ExportOutput.model_validate({"out": str(out), **index.model_dump()}))
    else:
        cli.err.print(
            f"{index.report_count} report(s) for {index.finding_count} finding(s) in {markup_safe(out)}/"
            f" (index: {markup_safe(out)}/index.json)",
            highlight=False,
        )
        for entry in index.reports:
            cli.err.print(f"  {markup_safe(entry.file)}: {markup_safe(entry.title)}", highlight=False, soft_wrap=True)
    disagreements = index.disagreements
    if disagreements:
        for check in disagreements:
            cli.err.print(
                f"repro of finding {check.finding_id} exited {check.exit_code}, its verdict {check.verdict} expects"
                f" {check.expected_exit}",
                highlight=False,
            )
        raise typer.Exit(EXIT_FAILURE)


def unwritable_reason(out: Path) -> str | None:
    """Why reports cannot be written under ``out`` (None when they can): checked before any work is done."""
    import errno
    import os
    import tempfile

    existing = out.expanduser().absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    hint = "choose a folder you can write, e.g. --out ./reports"
    if not existing.is_dir():
        return f"cannot write reports under --out {out}: {existing} is not a directory (it is a file); {hint}"
    try:
        out.expanduser().mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out.expanduser()):
            pass
    except OSError as exc:
        why = os.strerror(exc.errno) if exc.errno else str(exc)
        if exc.errno in (errno.EACCES, errno.EPERM):
            detail = f"{existing} does not let this user ({os.environ.get('USER') or os.getuid()}) write in it"
        elif exc.errno == errno.EROFS:
            detail = f"{existing} is on a read-only filesystem"
        else:
            detail = f"{existing} does not accept new folders or files there ({why}; a special filesystem such as /proc?)"
        return f"cannot write reports under --out {out}: {detail}; {hint}"
    return None
