"""The `review list` table laid out for a given width: API names shortened from the left, sources made short.

Every cell is data from an issue, an LLM or the fuzz core, so cells are rich Text (never markup) without
control sequences. Columns that would say the same on every row are left out and said once in the title.
"""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from agent.cli.json_out import format_measure
from agent.cli.terminal import short_names
from agent.review.views import FindingSummary
from agent.text_safety import one_line, rich_text

MIN_API_WIDTH = 14
NOTE_WIDTH = 24


def _source_cells(rows: list[FindingSummary]) -> tuple[list[str], str]:
    """Short source cells ("#123") when every source is in one repository, which the title then names."""
    sources = [row.source_issue for row in rows]
    repos = {s.rsplit("#", 1)[0] for s in sources if s and "#" in s}
    if len(repos) == 1:
        repo = repos.pop()
        return ["#" + s.rsplit("#", 1)[1] if s and "#" in s else "-" for s in sources], f" from {repo}"
    return [s or "-" for s in sources], ""


def _modes(row: FindingSummary) -> str:
    return f"{row.reference_mode} vs {row.test_mode}"


def _width(header: str, cells: list[str]) -> int:
    return max([len(header), *(len(cell) for cell in cells)])


def list_table(rows: list[FindingSummary], width: int, *, what: str, groups: list[str] | None = None) -> Table:
    """The table for ``rows`` (``what`` says which findings these are, for the title) at ``width`` columns.

    ``groups`` holds each row's root-cause group label (agent/review/grouping.py), shown in a short
    column. Short columns keep their whole text; API and modes share what is left (API names
    shortened from the left, never to the same string; modes wrap), so no column is squeezed out at 80 columns.
    """
    sources, title_extra = _source_cells(rows)
    show_group = groups is not None and len(set(groups)) > 1
    if groups and not show_group:
        title_extra += f", one root cause {groups[0]}"
    dtypes = {row.dtype or "-" for row in rows}
    show_dtype = len(dtypes) > 1
    if not show_dtype:
        title_extra += f", {dtypes.pop()}"
    show_review = any(row.review_status != "unreviewed" for row in rows)
    notes = [one_line(row.review_note) for row in rows]
    show_note = any(notes)
    modes = [_modes(row) for row in rows]
    cells: dict[str, list[str]] = {"id": [str(row.id) for row in rows], "verdict": [row.verdict for row in rows]}
    if show_review:
        cells["review"] = [row.review_status for row in rows]
    cells["API"] = [row.target_api for row in rows]
    cells["modes"] = modes
    if show_dtype:
        cells["dtype"] = [row.dtype or "-" for row in rows]
    cells["max|diff|"] = [format_measure(row.max_abs_diff) for row in rows]
    if show_group and groups is not None:
        cells["group"] = groups
    cells["issue"] = sources
    if show_note:
        cells["note"] = notes
    widths = {header: _width(header, column) for header, column in cells.items()}
    widths["issue"] = min(widths["issue"], 22)
    flexible = ("API", "modes", "note")
    # columns are divided by one space (no edges, no padding)
    room = width - (len(cells) - 1) - sum(w for header, w in widths.items() if header not in flexible)
    if show_note:  # the note wraps in what API and modes leave (at least 8 columns)
        widths["note"] = max(8, min(widths["note"], NOTE_WIDTH, room - MIN_API_WIDTH - 12))
        room -= widths["note"]
    api_width = max(MIN_API_WIDTH, min(widths["API"], room - widths["modes"]))
    modes_width = max(10, min(widths["modes"], room - api_width))
    apis = short_names(cells["API"], api_width)
    widths["API"] = max(len(api) for api in apis)
    widths["modes"] = modes_width

    table = Table(title=f"{len(rows)} {what}{title_extra}", box=box.SIMPLE_HEAD, show_edge=False,
                  padding=0, title_justify="left")
    for header in cells:
        table.add_column(header, justify="right" if header in ("id", "max|diff|") else "left",
                         width=widths[header], no_wrap=header not in ("modes", "issue", "note"), overflow="fold")
    cells["API"] = apis
    for index in range(len(rows)):
        table.add_row(*(rich_text(column[index]) for column in cells.values()))
    return table


def group_legend(entries: list[tuple[str, str]]) -> list[Text]:
    """"g3: <symptom>; op family ...; from <report>; findings ..." for each group that holds several findings;
    the console wraps them at its width."""
    return [rich_text(f"{label}: {description}") for label, description in entries]
