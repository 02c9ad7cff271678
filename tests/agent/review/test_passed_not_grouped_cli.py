"""`transfuzz review list`: findings that did not fail show no root-cause group and no legend line (real CLI, real DB)."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from agent.cli.app import app
from db.store import Store
from tests.agent.review.var_family import build_var_family


def test_passed_findings_have_no_group_label_or_legend_line(store: Store) -> None:
    with store.session() as session:
        family = build_var_family(session)
    ids = family.finding_ids
    result = CliRunner().invoke(app, ["--db", store.url, "review", "list", "--all"], env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.stderr
    table, _, legend = result.stdout.partition("root causes shared by several findings:")
    rows = {int(m.group(1)): m.group(0) for m in re.finditer(r"^\s*(\d+) (\w+) .*$", table, re.M)}
    for name in ("var_passed", "std_passed"):
        cells = rows[ids[name]].split()
        assert cells[1] == "passed" and "-" in cells and not any(re.fullmatch(r"g\d+", c) for c in cells)
    assert f"g{ids['var']}" in rows[ids["var"]].split()
    labels = re.findall(r"^(g\d+):", legend, re.M)
    assert labels == [f"g{ids['var']}", f"g{ids['direct_var_mean']}"]
    assert "passed" not in legend
