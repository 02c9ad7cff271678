"""`transfuzz review list | show | accept | reject`: look at findings and record decisions."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agent.cli.context import EXIT_USAGE, fail, get_ctx
from agent.cli.json_out import Versioned
from agent.cli.sandbox_opt import NoSandboxOpt, sandbox_required
from agent.review.views import FindingDetail, FindingSummary
from agent.text_safety import markup_safe, rich_text
from db.status import REVIEW_STATUSES, VERDICTS

if TYPE_CHECKING:
    from agent.review.known import IssueMatch

review_app = typer.Typer(help="Review proposed findings.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")


# Enums built from db.status (the one list of each): click lists them in --help and refuses others.
ReviewStatus = Enum("ReviewStatus", {value: value for value in REVIEW_STATUSES}, type=str)  # type: ignore[misc]
Verdict = Enum("Verdict", {value: value for value in VERDICTS}, type=str)  # type: ignore[misc]
DEFAULT_VERDICTS = ("confirmed", "suspicious")


class ReviewShow(Versioned, FindingDetail):
    """`transfuzz review show ID --json`."""

    root_cause_group: list[str]


class ReviewListRow(FindingSummary):
    """A `review list` row with its root-cause group (agent/review/grouping.py)."""

    root_cause_id: str  # "g12": named after the group's oldest finding
    root_cause: str  # symptom; locus; members


class ReviewList(Versioned):
    """`transfuzz review list --json`."""

    filters: dict[str, Any]
    findings: list[ReviewListRow]


@review_app.command("list")
def list_cmd(
    ctx: typer.Context,
    status: Annotated[list[ReviewStatus] | None, typer.Option("--status", help="Review status (repeatable).")] = None,
    verdict: Annotated[list[Verdict] | None, typer.Option("--verdict", help="Verdict (repeatable).")] = None,
    show_all: Annotated[bool, typer.Option("--all", help="Every finding, whatever its verdict and review status "
                                           "(default: unreviewed confirmed and suspicious ones).")] = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Show at most this many.")] = None,
) -> None:
    """List findings to review, oldest first: unreviewed confirmed and suspicious ones unless --all or a filter."""
    from agent.cli.terminal import output_console, output_width
    from agent.review.grouping import group_by_root_cause, groups_by_finding
    from agent.review.list_view import group_legend, list_table
    from db.queries.findings import latest_notes, list_findings

    cli = get_ctx(ctx)
    statuses = [s.value for s in status] if status else (None if show_all or verdict else ["unreviewed"])
    verdicts = [v.value for v in verdict] if verdict else (None if show_all or status else list(DEFAULT_VERDICTS))
    with cli.store(must_exist=True).session() as session:
        records = list_findings(session, review_statuses=statuses, verdicts=verdicts, limit=limit)
        notes = latest_notes(session, [f.id for f in records])
        # Groups span every finding, so a filtered listing shows the same labels as an unfiltered one.
        group_of = groups_by_finding(group_by_root_cause(list_findings(session)) if records else [])
        rows = [ReviewListRow(**{**FindingSummary.of(f).model_dump(), "review_note": notes.get(f.id, "")},
                              root_cause_id=group_of[f.id].label, root_cause=group_of[f.id].describe())
                for f in records]
    if cli.json:
        cli.emit(ReviewList(filters={"review_status": statuses, "verdict": verdicts, "limit": limit}, findings=rows))
        return
    what = " ".join(["/".join(chosen) for chosen in (statuses, verdicts) if chosen] + ["findings"])
    if not rows:
        hint = "" if show_all else "; `transfuzz review list --all` shows every finding"
        cli.err.print(f"no {markup_safe(what)}{hint}", highlight=False)
        return
    console = output_console()
    # A finding that did not fail has no root cause: no group label, and never a legend line.
    console.print(list_table(rows, output_width(), what=what,
                             groups=[row.root_cause_id if group_of[row.id].has_cause else "-" for row in rows]))
    shared = {row.root_cause_id: group_of[row.id] for row in rows
              if len(group_of[row.id].findings) > 1 and group_of[row.id].has_cause}
    if shared:
        console.print("root causes shared by several findings:", highlight=False)
        for line in group_legend([(label, group.describe()) for label, group in shared.items()]):
            console.print(line, highlight=False)


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
    with cli.store(must_exist=True).session() as session:
        try:
            return FindingDetail.of(get_finding(session, finding_id))
        except FindingNotFound as exc:
            fail(f"{exc}; `transfuzz review list` shows the ids", code=EXIT_USAGE)


@review_app.command("show")
def show_cmd(
    ctx: typer.Context,
    finding_id: IdArgument,
    replay: Annotated[bool, typer.Option("--replay", help="Rerun the saved input in a sandboxed interpreter and "
                                         "show both modes and float64 at the worst elements (seconds to minutes).")]
    = False,
    no_sandbox: NoSandboxOpt = False,
) -> None:
    """Source issue, pattern in formal notation, target API, verdict, evidence, repro, past decisions."""
    from agent.review.render import render_detail

    from agent.review.values import finding_values

    cli = get_ctx(ctx)
    detail = _load_detail(ctx, _finding_id(finding_id))
    values = finding_values(detail.evidence)
    if replay:
        values.replay = _replay(ctx, detail, sandbox_required(no_sandbox))
    detail = detail.model_copy(update={"values": values})
    group = _group_lines(ctx, detail.id)
    if cli.json:
        cli.emit(ReviewShow(**detail.model_dump(), root_cause_group=group))
        return
    typer.echo(render_detail(detail, group=group))


def _replay(ctx: typer.Context, detail: FindingDetail, sandbox: bool):  # type: ignore[no-untyped-def]
    """The finding's saved input rerun in the sandbox (agent/review/replay.py)."""
    from pathlib import Path

    from agent.review.replay import Replay, replay_finding
    from db.queries.findings import get_finding

    from fuzz_core.evidence import Evidence

    inputs = Evidence.of(detail.evidence).inputs_path
    if not isinstance(inputs, str) or not Path(inputs).is_file():
        return Replay(error="no saved input to replay")
    cli = get_ctx(ctx)
    with cli.store(must_exist=True).session() as session:
        spec = get_finding(session, detail.id).harness_spec
    key = detail.signature.rsplit("|", 1)[-1] if detail.signature else ""
    cli.err.print("replaying the saved input in the sandbox …", highlight=False)
    return replay_finding(spec, inputs, key, sandbox=sandbox)


def _group_lines(ctx: typer.Context, finding_id: int) -> list[str]:
    """The finding's root-cause group and its possible duplicates (agent/review/grouping.py, known.py)."""
    from agent.review.grouping import group_by_root_cause, root_cause
    from agent.review.known import matching_issues
    from db.queries.findings import get_finding, list_findings

    with get_ctx(ctx).store(must_exist=True).session() as session:
        cause = root_cause(get_finding(session, finding_id))
        group = next(g for g in group_by_root_cause(list_findings(session)) if g.cause.key == cause.key)
        lines = [cause.text,
                 "findings: " + ", ".join(str(f.id) for f in group.findings) + " (APIs: " + ", ".join(group.apis) + ")"]
        lines += [_match_line(m) for m in matching_issues(session, group)]
    return lines


def _match_line(match: IssueMatch) -> str:
    """One "already reported?" line: the source issue itself, or a possible duplicate (agent/review/known.py)."""
    from agent.review.known import SOURCE_RELATION

    link = f" {match.url}" if match.url else ""
    if match.relation == SOURCE_RELATION:
        return (f"already reported: {match.repo}#{match.number} ({match.state}), the source issue: {match.title}{link}"
                f" — {'; '.join(match.matched)}; {match.note}")
    return f"possible duplicate of {match.repo}#{match.number} ({match.state}): {match.title}{link}"


def _decide(ctx: typer.Context, finding_id: int, decision: str, note: str | None, reviewer: str | None) -> None:
    from agent.review.decide import ReviewInputError, decide, make_decision
    from db.queries.findings import FindingNotFound

    cli = get_ctx(ctx)
    try:
        checked = make_decision(finding_id, decision, reviewer, note)
    except ReviewInputError as exc:
        fail(str(exc), code=EXIT_USAGE)
    with cli.store(must_exist=True).session() as session:
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
    force: Annotated[bool, typer.Option("--force", help="Accept a finding whose verdict is not confirmed "
                                        "(say why with --note).")] = False,
) -> None:
    """Accept a finding as a real bug (a finding that is not confirmed needs --force)."""
    checked_id = _finding_id(finding_id)
    verdict = _load_detail(ctx, checked_id).verdict
    if verdict != "confirmed" and not force:
        fail(f"finding {checked_id} is {verdict}, not confirmed: the fuzz core did not establish it as a bug; "
             f"`transfuzz review show {checked_id}` shows why. Accept it anyway with --force --note WHY",
             code=EXIT_USAGE)
    _decide(ctx, checked_id, "accepted", note, reviewer)


@review_app.command("reject")
def reject_cmd(
    ctx: typer.Context,
    finding_id: IdArgument,
    note: NoteOption = None,
    reviewer: ReviewerOption = None,
) -> None:
    """Reject a finding as a false alarm; --note says why."""
    _decide(ctx, _finding_id(finding_id), "rejected", note, reviewer)
