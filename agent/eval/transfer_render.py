"""The transfer evaluation as rich tables; every data string is a Text cell, never markup."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from agent.eval.transfer import TransferEval
from agent.text_safety import rich_text


def _figure(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def transfer_renderable(result: TransferEval) -> Group:
    title = (f"matcher {result.matcher}, top-k {result.top_k}, inventory {result.inventory_apis} APIs "
             f"({result.inventory_source})")
    tables: list[Table] = []
    for group in result.groups:
        heading = (f"{group.id}: {group.source} {group.kind} [eager vs {group.test_mode}] from "
                   f"{group.pattern_from}; {group.candidates} APIs pass the gates")
        ranks = Table(title=rich_text(heading), title_justify="left")
        for column in ("sibling", "rank", "random rank", "lift", "confirmed"):
            ranks.add_column(column, justify="left" if column in ("sibling", "confirmed") else "right")
        for sibling in group.siblings:
            confirmed = "yes" if sibling.confirmed else ("no" if sibling.fuzzed else "not fuzzed")
            rank = str(sibling.rank) if sibling.rank is not None else f"gated: {sibling.gated_out}"
            ranks.add_row(rich_text(sibling.api), rich_text(rank), _figure(sibling.random_rank, 1),
                          _figure(sibling.lift, 1), confirmed)
        tables.append(ranks)
    totals = Table(title="over all sibling pairs", title_justify="left")
    totals.add_column("measure")
    totals.add_column("matcher", justify="right")
    totals.add_column("random pick among gated", justify="right")
    totals.add_column("lift", justify="right")
    hit_lift = result.hits_at_k / result.random_hits_at_k if result.random_hits_at_k else None
    totals.add_row(f"hit@{result.top_k}", _figure(result.hits_at_k), _figure(result.random_hits_at_k), _figure(hit_lift, 1))
    totals.add_row("MRR (gated out = 0)", _figure(result.mrr, 3), _figure(result.random_mrr, 3), _figure(result.mrr_lift, 1))
    totals.add_row("rank (geometric mean of random/rank)", f"{result.ranked_pairs}/{result.pairs} ranked", "",
                   _figure(result.mean_rank_lift, 1))
    totals.add_row("share confirmed (fuzzed siblings)", _figure(result.share_confirmed), "", "")
    parts: list[Text | Table] = [rich_text(title), *tables, totals]
    parts.extend(rich_text(f"note: {note}") for note in result.notes)
    return Group(*parts)
