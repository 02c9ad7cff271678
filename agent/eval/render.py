"""The scores as rich tables for a terminal; every data string is a Text cell, never markup."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from agent.eval.issue_scoring import IssueScores
from agent.eval.scoring import ExtractionScores
from agent.text_safety import rich_text


def _rate(hits: int, total: int) -> str:
    return f"{hits}/{total} = {hits / total:.2f}" if total else "0/0"


def scores_renderable(scores: ExtractionScores, title: str, *, misses: bool = False) -> Group:
    triage = Table()
    for column in ("triage class", "support", "predicted", "precision", "recall", "F1"):
        triage.add_column(column, justify="left" if column == "triage class" else "right")
    for row in scores.triage:
        triage.add_row(rich_text(row.label), str(row.support), str(row.predicted), f"{row.precision:.2f}",
                       f"{row.recall:.2f}", f"{row.f1:.2f}")
    confusion = Table(title="confusion (rows: labelled, columns: predicted)", title_justify="left")
    confusion.add_column("")
    classes = list(scores.confusion)
    for name in classes:
        confusion.add_column(rich_text(name), justify="right")
    for name in classes:
        confusion.add_row(rich_text(name), *(str(scores.confusion[name][other]) for other in classes))
    accuracy = Table(title="pattern accuracy on reports labelled silent_bug", title_justify="left")
    accuracy.add_column("measure")
    accuracy.add_column("hits/total", justify="right")
    for name, value in (("kind (any accepted)", scores.kind), ("kind (preferred)", scores.kind_strict),
                        ("API", scores.api), ("mode pair", scores.modes),
                        ("false-alarm class (on not_a_bug)", scores.false_alarm_class)):
        accuracy.add_row(name, _rate(value.hits, value.total))
    parts: list[Text | Table] = [rich_text(title), triage, confusion, accuracy]
    if misses and scores.misses:
        table = Table(title="triage misses", title_justify="left")
        for column in ("id", "category", "labelled", "predicted"):
            table.add_column(column)
        for miss in scores.misses:
            table.add_row(*(rich_text(v) for v in (miss.id, miss.category, miss.expected, miss.got)))
        parts.append(table)
    return Group(*parts)


def issue_scores_renderable(scores: IssueScores, title: str, *, misses: bool = False,
                            withheld: int = 0) -> Group:
    """The tables of real-issue scores (Note [Scoring real-issue labels]); misses list train issues only."""
    triage = Table(title="triage on issues with a decided verdict (bug → silent_bug, not_bug → not_a_bug)",
                   title_justify="left")
    for column in ("triage class", "support", "predicted", "precision", "recall", "F1"):
        triage.add_column(column, justify="left" if column == "triage class" else "right")
    for row in scores.triage:
        triage.add_row(rich_text(row.label), str(row.support), str(row.predicted), f"{row.precision:.2f}",
                       f"{row.recall:.2f}", f"{row.f1:.2f}")
    confusion = Table(title="confusion (rows: labelled verdict, columns: predicted)", title_justify="left")
    confusion.add_column("")
    classes = list(next(iter(scores.confusion.values())))
    for name in classes:
        confusion.add_column(rich_text(name), justify="right")
    for verdict, row in scores.confusion.items():
        confusion.add_row(rich_text(verdict), *(str(row[name]) for name in classes))
    accuracy = Table(title=f"on the {scores.targets} issues labelled bug with a repro", title_justify="left")
    accuracy.add_column("measure")
    accuracy.add_column("hits/total", justify="right")
    accuracy.add_column("given a pattern", justify="right")
    accuracy.add_row("silent-bug recall (a pattern)", _rate(scores.silent_bug_recall.hits,
                                                            scores.silent_bug_recall.total), "")
    for name, value, given in (("kind", scores.kind, scores.kind_given_pattern),
                               ("API", scores.api, scores.api_given_pattern),
                               ("mode pair (expressible labels)", scores.modes, scores.modes_given_pattern)):
        accuracy.add_row(name, _rate(value.hits, value.total), _rate(given.hits, given.total))
    parts: list[Text | Table] = [rich_text(title), triage, confusion, accuracy]
    if misses:
        table = Table(title="train issues the extractor got wrong", title_justify="left")
        for column in ("issue", "verdict", "repro", "labelled kind", "triage", "kind", "API", "modes", "wrong"):
            table.add_column(column)
        for miss in scores.misses:
            table.add_row(*(rich_text(v) for v in (
                f"#{miss.number}", miss.verdict, "yes" if miss.has_repro else "no", miss.kind, miss.predicted_triage,
                miss.predicted_kind or "-", miss.predicted_api or "-", miss.predicted_modes or "-",
                ", ".join(miss.wrong))))
        parts.append(table)
        if withheld:
            parts.append(rich_text(f"{withheld} eval issues not listed: eval is reported, never read while "
                                   "writing rules"))
    return Group(*parts)
