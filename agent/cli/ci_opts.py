"""Options `fuzz` and `run` share for distributed campaigns and CI: --executor, --ray-address, --fail-on,
--allow-errors, --junit, --sarif; and the step after the campaign that writes the result files and applies the
gate."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from agent.cli.context import EXIT_FAILURE, EXIT_USAGE, fail

ExecutorOpt = Annotated[str, typer.Option("--executor", help="local (a process pool on this machine) or ray "
                                          "(Ray actors, each one warm sandboxed worker; needs the ray extra).")]
RayAddressOpt = Annotated[str | None, typer.Option("--ray-address", help="With --executor ray: 'auto' (the cluster "
                                                   "this machine belongs to) or ray://HOST:10001; default: a new "
                                                   "local Ray instance.")]
FailOnOpt = Annotated[str | None, typer.Option("--fail-on", help="CI gate: exit 1 when the run finds this or worse "
                                               "(confirmed: confirmed or crash; suspicious: also suspicious or hang), "
                                               "or when a harness errored or no input was executed.")]
AllowErrorsOpt = Annotated[bool, typer.Option("--allow-errors", help="With --fail-on: let errored harnesses and a run "
                                              "that executed no input pass the gate (they are still reported).")]
JunitOpt = Annotated[Path | None, typer.Option("--junit", help="Write the run's verdicts as JUnit XML here.",
                                               dir_okay=False)]
SarifOpt = Annotated[Path | None, typer.Option("--sarif", help="Write the run's findings as SARIF 2.1.0 here.",
                                               dir_okay=False)]


def apply_executor(config: Any, executor: str, ray_address: str | None) -> None:
    """Put the executor choice on a campaign config; exit 2 on a bad value."""
    from agent.campaign.executors import EXECUTORS

    if executor not in EXECUTORS:
        fail(f"--executor must be one of {', '.join(EXECUTORS)}", code=EXIT_USAGE)
    if ray_address is not None and executor != "ray":
        fail("--ray-address needs --executor ray", code=EXIT_USAGE)
    config.executor = executor
    config.ray_address = ray_address


def check_gate(fail_on: str | None, allow_errors: bool = False) -> None:
    """Refuse a bad --fail-on, or --allow-errors with no gate to loosen, before any work is done (exit 2)."""
    from agent.ci.reports import GATES

    if fail_on is not None and fail_on not in GATES:
        fail(f"--fail-on must be one of {', '.join(GATES)}", code=EXIT_USAGE)
    if allow_errors and fail_on is None:
        fail("--allow-errors needs --fail-on", code=EXIT_USAGE)


@contextmanager
def campaign_errors() -> Iterator[None]:
    """A second driver on SQLite or an executor that cannot start: one clear line, exit 1, nothing lost."""
    from agent.campaign.executors import ExecutorUnavailable
    from db.queries.campaign import DriverBusy

    try:
        yield
    except (DriverBusy, ExecutorUnavailable) as exc:
        fail(str(exc), code=EXIT_FAILURE)


def ci_results(store: Any, run_id: int | None, *, fail_on: str | None, junit: Path | None, sarif: Path | None,
               err: Any, source_uri: str | None = None, allow_errors: bool = False) -> bool:
    """Write the requested result files for fuzz run `run_id` and say whether the gate failed (a run that
    errored or executed nothing fails it too, unless `allow_errors`)."""
    if fail_on is None and junit is None and sarif is None:
        return False
    if run_id is None:  # no campaign ran at all: nothing to write, and nothing was tested
        if fail_on is not None and not allow_errors:
            err.print(f"gate failed (--fail-on {fail_on}): no input was executed (no fuzz run; --allow-errors to "
                      "accept)", highlight=False, soft_wrap=True)
            return True
        return False
    from importlib.metadata import PackageNotFoundError, version

    from agent.ci.reports import judge_gate, junit_xml, sarif_json
    from db.queries.run_results import run_verdicts

    with store.session() as session:
        verdicts = run_verdicts(session, run_id)
    gate = judge_gate(run_id, verdicts, fail_on, allow_errors=allow_errors)
    try:
        tool_version = version("transfuzz")
    except PackageNotFoundError:
        tool_version = "0"
    for path, text in ((junit, lambda: junit_xml(run_id, verdicts, gate)),
                       (sarif, lambda: sarif_json(run_id, verdicts, tool_version=tool_version, gate=gate,
                                                  source_uri=source_uri))):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text())
    for line in gate.log_lines():
        err.print(line, highlight=False, soft_wrap=True)
    return gate.failed
