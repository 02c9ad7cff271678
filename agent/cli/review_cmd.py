"""`transfuzz review list | show | accept | reject`: look at findings and record decisions."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from agent.cli.context import EXIT_USAGE, fail, get_ctx
from agent.text_safety import markup_safe, rich_text
from db.status import REVIEW_STATUSES, VERDICTS

if TYPE_CHECKING:
    from agent.review.views import FindingDetail

review_app = typer.Typer(help="Review proposed findings.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")


def _checked(values: list[str] | None, allowed: tuple[str, ...], option: str) -> list[str] | None:
    if not values:
        return None
    bad = [v for v in values if v not in allowed]
    if bad:
        fail(f"{option} {bad[0]!r} is not one of {', '.join(allowed)}", code=EXIT_USAGE)
    return values


@review_app.command("list")
def list_cmd(
    ctx: typer.Context,
    status: Annotated[
        list[str] | None,
        typer.Option("--status", help=f"Review status, repeatable: {', '.join(REVIEW_STATUSES)}."),
    ] = None,
    verdict: Annotated[
        list[str] | None, typer.Option("--verdict", help=f"Verdict, repeatable: {', '.join(VERDICTS)}.")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Show at most this many.")] = None,
) -> None:
    """List findings, oldest first."""
    from agent.review.views import FindingSummary
    from db.queries.findings import list_findings

    cli = get_ctx(ctx)
    statuses = _checked(status, REVIEW_STATUSES, "--status")
    verdicts = _checked(verdict, VERDICTS, "--verdict")
    with cli.store().session() as session:
        rows = [
            FindingSummary.of(f)
            for f in list_findings(session, review_statuses=statuses, verdicts=verdicts, limit=limit)
        ]
    if cli.json:
        cli.emit([row.model_dump(mode="json") for row in rows])
        return
    if not rows:
        cli.err.print("no findings match", highlight=False)
        return
    table = Table(title=f"{len(rows)} finding(s)")
    for column in ("id", "verdict", "review", "API", "modes", "dtype", "max |diff|", "source"):
        table.add_column(column, justify="right" if column in ("id", "max |diff|") else "left")
    for row in rows:  # cells are Text: data is never parsed as markup, and loses control sequences
        table.add_row(
            str(row.id),
            rich_text(row.verdict),
            rich_text(row.review_status),
            rich_text(row.target_api),
            rich_text(f"{row.reference_mode} vs {row.test_mode}"),
            rich_text(row.dtype or "-"),
            rich_text(f"{row.max_abs_diff:.3g}" if isinstance(row.max_abs_diff, float) else (row.max_abs_diff or "-")),
            rich_text(row.source_issue or "-"),
        )
    # Piped output keeps whole rows; a terminal wraps to its own width.
    Console(width=None if sys.stdout.isatty() else 200).print(table)


def _finding_id(text: str) -> int:
    """IDs are taken as text so that a typo gets the same one-line usage error as an unknown id."""
    try:
        value = int(text)
    except ValueError:
        fail(f"finding id must be a number, got {text!r}", code=EXIT_USAGE)
    if value < 1:
        fail(f"finding id must be positive, got {value}", code=EXIT_USAGE)
    return value


IdArgument = Annotated[str, typer.Argument(metavar="ID", help="Finding id (see `review list`).")]


def _load_detail(ctx: typer.Context, finding_id: int) -> FindingDetail:
    from agent.review.views import FindingDetail
    from db.queries.findings import FindingNotFound, get_finding

    cli = get_ctx(ctx)
    with cli.store().session() as session:
        try:
            return FindingDetail.of(get_finding(session, finding_id))
        except FindingNotFound as exc:
            fail(f"{exc}; `transfuzz review list` shows the ids", code=EXIT_USAGE)


@review_app.command("show")
def show_cmd(ctx: typer.Context, finding_id: IdArgument) -> None:
    """Source issue, pattern in formal notation, target API, verdict, evidence, repro, past decisions."""
    from agent.review.render import render_detail

    cli = get_ctx(ctx)
    detail = _load_detail(ctx, _finding_id(finding_id))
    group = _group_lines(ctx, detail.id)
    if cli.json:
        cli.emit({**detail.model_dump(mode="json"), "root_cause_group": group})
        return
    typer.echo(render_detail(detail, group=group))


def _group_lines(ctx: typer.Context, finding_id: int) -> list[str]:
    """The finding's root-cause group and its possible duplicates (agent/review/grouping.py, known.py)."""
    from agent.review.grouping import group_by_root_cause, root_cause
    from agent.review.known import matching_issues
    from db.queries.findings import get_finding, list_findings

    with get_ctx(ctx).store().session() as session:
        cause = root_cause(get_finding(session, finding_id))
        group = next(g for g in group_by_root_cause(list_findings(session)) if g.cause.key == cause.key)
        lines = [f"{cause.symptom}; divergence at {cause.locus}",
                 "findings: " + ", ".join(str(f.id) for f in group.findings) + " (APIs: " + ", ".join(group.apis) + ")"]
        lines += [f"possible duplicate of {m.repo}#{m.number} ({m.state}): {m.title} {m.url or ''}"
                  for m in matching_issues(session, group)]
    return lines


def _decide(ctx: typer.Context, finding_id: int, decision: str, note: str | None, reviewer: str | None) -> None:
    from agent.review.decide import ReviewInputError, decide, make_decision
    from db.queries.findings import FindingNotFound

    cli = get_ctx(ctx)
    try:
        checked = make_decision(finding_id, decision, reviewer, note)
    except ReviewInputError as exc:
        fail(str(exc), code=EXIT_USAGE)
    with cli.store().session() as session:
        try:
            stored = decide(session, checked)
        except FindingNotFound as exc:
            fail(f"{exc}; `transfuzz review list` shows the ids", code=EXIT_USAGE)
    if cli.json:
        from agent.review.views import ReviewView

        cli.emit(ReviewView.of(stored).model_dump(mode="json"))
        return
    cli.err.print(f"finding {finding_id} {decision} by {markup_safe(stored.reviewer)}", highlight=False)


NoteOption = Annotated[str | None, typer.Option("--note", "-m", help="Why (required for reject).")]
ReviewerOption = Annotated[str | None, typer.Option("--reviewer", help="Your name (default: $USER).")]


@review_app.command("accept")
def accept_cmd(
    ctx: typer.Context,
    finding_id: IdArgument,
    note: NoteOption = None,
    reviewer: ReviewerOption = None,
) -> None:
    """Accept a finding as a real bug."""
    _decide(ctx, _finding_id(finding_id), "accepted", note, reviewer)


@review_app.command("reject")
def reject_cmd(
    ctx: typer.Context,
    finding_id: IdArgument,
    note: NoteOption = None,
    reviewer: ReviewerOption = None,
) -> None:
    """Reject a finding as a false alarm; --note says why."""
    _decide(ctx, _finding_id(finding_id), "rejected", note, reviewer)
