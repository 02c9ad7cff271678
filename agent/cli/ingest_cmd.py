"""`transfuzz ingest github|file`: load issues into the database, with progress and a summary."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from agent.cli.context import EXIT_FAILURE, EXIT_USAGE, CliContext, fail, get_ctx

MAX_SKIP_LINES = 20  # bad records printed one per line; the rest are counted in the summary

# The GitHub filters, shared by `ingest github` and `run github:OWNER/REPO`.
LabelOpt = Annotated[list[str] | None, typer.Option(
    "--label", help="Only issues with this label (repeatable: all must match), e.g. \"module: correctness (silent)\".")]
IssueState = Literal["open", "closed", "all"]  # agent.ingest.github_sync.STATES (a test ties them)
StateOpt = Annotated[IssueState, typer.Option("--state", help="Issue state.")]
SinceOpt = Annotated[str | None, typer.Option(
    "--since", help="Only issues updated at or after this date (2025-01-01 or 2025-01-01T12:00:00Z).")]
CommentsOpt = Annotated[bool, typer.Option(
    "--comments", help="Also fetch each changed issue's comments (one more request per issue).")]

GITHUB_EPILOG = (
    "Token: set GITHUB_TOKEN (a fine-grained token with read access to public repositories is enough); it is "
    "read from the environment only, never from the command line. Rate limits: without a token GitHub allows "
    "60 requests an hour, with one 5,000; a page holds 100 issues, --comments costs a request per issue, and "
    "the sync waits (and says so) when the limit is reached. The sync is incremental: running it again fetches "
    "only what changed, and --limit stops early (the next run resumes). "
    "A first run on the real tracker: "
    "transfuzz ingest github pytorch/pytorch --label \"module: correctness (silent)\" --since 2025-01-01 --limit 500"
)


def register(app: typer.Typer) -> None:
    """Add the ``ingest`` group (``github``, ``file``) to the root app."""
    ingest_app = typer.Typer(help="Load issues from GitHub or a dump file.", no_args_is_help=True)
    ingest_app.command("github", epilog=GITHUB_EPILOG)(github)
    ingest_app.command("file")(file)
    app.add_typer(ingest_app, name="ingest")


def parse_since(value: str) -> datetime:
    """``2024-01-31`` or any ISO-8601 timestamp; a time without zone is UTC."""
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"--since must be an ISO date such as 2024-01-31 or 2024-01-31T12:00:00Z, got {value!r}") from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


class _Reporter:
    """Progress bar and messages on stderr; the bar only on a terminal and not with --json."""

    def __init__(self, cli: CliContext, unit: str) -> None:
        self.cli = cli
        self.unit = unit
        self.skipped = 0
        self.progress: Progress | None = None
        self.task: int | None = None

    def notify(self, message: str) -> None:
        if message.startswith("skipped "):
            self.skipped += 1
            if self.skipped > MAX_SKIP_LINES:
                if self.skipped == MAX_SKIP_LINES + 1:
                    message = "more bad records skipped; their count is in the summary"
                else:
                    return
        console = self.progress.console if self.progress is not None else self.cli.err
        console.print(message, highlight=False, markup=False, soft_wrap=True)

    def update(self, done: int, total: int | None) -> None:
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, completed=done, total=total)

    @contextmanager
    def running(self, description: str) -> Iterator[_Reporter]:
        if self.cli.json or not self.cli.err.is_terminal:
            yield self
            return
        if self.unit == "bytes":
            columns = [TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeElapsedColumn()]
        else:
            columns = [SpinnerColumn(), TextColumn("{task.description}"), MofNCompleteColumn(), TimeElapsedColumn()]
        with Progress(*columns, console=self.cli.err, transient=True) as progress:
            self.progress = progress
            self.task = progress.add_task(description, total=None)
            try:
                yield self
            finally:
                self.progress = None


def _report(cli: CliContext, summary) -> None:  # type: ignore[no-untyped-def]
    if cli.json:
        from agent.cli.stage_docs import IngestOutput

        cli.emit(IngestOutput.model_validate(summary.model_dump()))
        return
    typer.echo(summary.text())


def github(
    ctx: typer.Context,
    repo: Annotated[str, typer.Argument(help="OWNER/REPO, e.g. pytorch/pytorch.")],
    label: LabelOpt = None,
    state: StateOpt = "all",
    since: SinceOpt = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Stop after this many issues (the next run resumes).")] = None,
    comments: CommentsOpt = False,
    api_url: Annotated[str | None, typer.Option("--api-url", help="REST API base URL (GitHub Enterprise: https://HOST/api/v3).")] = None,
) -> None:
    """Sync a repository's issues from the GitHub REST API (incremental; rate-limit aware; token in GITHUB_TOKEN)."""
    from agent.ingest.github_api import GitHubError
    from agent.ingest.github_sync import STATES, ingest_github
    from agent.ingest.records import valid_repo_name
    from agent.ingest.summary import IngestEvents

    cli = get_ctx(ctx)
    if not valid_repo_name(repo):
        fail(f"repository must be OWNER/REPO, got {repo!r}", code=EXIT_USAGE)
    if state not in STATES:
        fail(f"--state must be one of {', '.join(STATES)}, got {state!r}", code=EXIT_USAGE)
    if limit is not None and limit < 1:
        fail("--limit must be at least 1", code=EXIT_USAGE)
    if api_url is not None and not api_url.startswith(("http://", "https://")):
        fail(f"--api-url must be an http(s) URL, got {api_url!r}", code=EXIT_USAGE)
    try:
        since_at = parse_since(since) if since is not None else None
    except ValueError as exc:
        fail(str(exc), code=EXIT_USAGE)
    token = cli.settings.github_token.get_secret_value() if cli.settings.github_token else None
    store = cli.store()
    reporter = _Reporter(cli, "issues")
    try:
        with reporter.running(f"github:{repo}"):
            summary = ingest_github(
                store,
                repo,
                labels=list(label or []),
                state=state,
                since=since_at,
                limit=limit,
                comments=comments,
                api_url=api_url,
                token=token,
                events=IngestEvents(notify=reporter.notify, progress=reporter.update),
            )
    except GitHubError as exc:
        fail(str(exc), code=EXIT_FAILURE)
    _report(cli, summary)


def file(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="JSON array of REST issues, JSON Lines of them, or `gh issue list --json` output.")],
    repo: Annotated[str | None, typer.Option("--repo", help="OWNER/REPO for every record (else taken from each record's URL).")] = None,
    encoding: Annotated[str, typer.Option("--encoding", help="The file's text encoding (any Python codec, e.g. latin-1).")] = "utf-8",
    max_body_kib: Annotated[
        int | None, typer.Option("--max-body-kib", help="Cut longer bodies and comments, marked truncated [default: setting ingest_max_body_kib, 256].")
    ] = None,
) -> None:
    """Ingest an issue dump file (streamed; bad records are reported and skipped)."""
    import codecs

    from agent.ingest.file_source import ingest_file
    from agent.ingest.records import RecordLimits, valid_repo_name
    from agent.ingest.stream import DumpFormatError
    from agent.ingest.summary import IngestEvents

    cli = get_ctx(ctx)
    if repo is not None and not valid_repo_name(repo):
        fail(f"--repo must be OWNER/REPO, got {repo!r}", code=EXIT_USAGE)
    try:
        codecs.lookup(encoding)
    except LookupError:
        fail(f"--encoding: unknown encoding {encoding!r}", code=EXIT_USAGE)
    body_kib = max_body_kib if max_body_kib is not None else cli.settings.ingest_max_body_kib
    if body_kib < 1:
        fail(f"--max-body-kib must be at least 1, got {body_kib}", code=EXIT_USAGE)
    if not path.is_file():
        fail(f"no such file: {path}", code=EXIT_USAGE)
    store = cli.store()
    reporter = _Reporter(cli, "bytes")
    try:
        with reporter.running(path.name):
            summary = ingest_file(
                store,
                path,
                repo=repo,
                events=IngestEvents(notify=reporter.notify, progress=reporter.update),
                limits=RecordLimits(max_body_bytes=body_kib * 1024),
                encoding=encoding,
            )
    except DumpFormatError as exc:
        fail(str(exc), code=EXIT_USAGE)
    except OSError as exc:
        fail(f"cannot read {path}: {exc}", code=EXIT_USAGE)
    not_json = not_json_reason(str(path), summary)
    if not_json is not None:
        fail(not_json, code=EXIT_USAGE)
    _report(cli, summary)


def not_json_reason(source: str, summary) -> str | None:  # type: ignore[no-untyped-def]
    """A file none of whose records is JSON is not a dump with bad records but no dump at all (exit 2)."""
    if summary.issues or summary.pull_requests or not summary.problems:
        return None
    if not all(problem.reason.startswith("invalid JSON") for problem in summary.problems):
        return None
    first = summary.problems[0]
    return f"{source} is not JSON: {first.position}: {first.reason.removeprefix('invalid JSON: ')}"
