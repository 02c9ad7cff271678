"""The scores as rich tables for a terminal; every data string is a Text cell, never markup."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

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
