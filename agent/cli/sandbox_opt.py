"""`--no-sandbox` and the check behind it: commands that run issue- or LLM-derived work need bubblewrap."""

from __future__ import annotations

from typing import Annotated

import typer

from agent.cli.context import EXIT_USAGE, fail

NoSandboxOpt = Annotated[bool, typer.Option(
    "--no-sandbox",
    help="Run workers/repros without bubblewrap. Trusted local input only: see docs/trust_boundary.md.")]


def sandbox_required(no_sandbox: bool) -> bool:
    """True when the work must run sandboxed; exits 2 saying how to install bubblewrap when it cannot."""
    if no_sandbox:
        return False
    from fuzz_core.sandbox import SandboxUnavailable, require_bwrap

    try:
        require_bwrap()
    except SandboxUnavailable as exc:
        fail(str(exc), code=EXIT_USAGE)
    return True
