"""Budget strings: durations and execution counts; anything else is a clear error."""

from __future__ import annotations

import pytest

from agent.cli.budget import Budget, parse_budget


@pytest.mark.parametrize(("text", "expected"), [
    ("90s", Budget(seconds=90)), ("10m", Budget(seconds=600)), ("1h30m", Budget(seconds=5400)),
    ("45", Budget(seconds=45)), ("2000x", Budget(executions=2000)), ("1.5m", Budget(seconds=90)),
])
def test_valid_budgets(text: str, expected: Budget) -> None:
    assert parse_budget(text) == expected


@pytest.mark.parametrize("text", ["", "ten minutes", "10d", "0s", "0x", "-5m", "5mm"])
def test_invalid_budgets_name_the_accepted_forms(text: str) -> None:
    with pytest.raises(ValueError, match="budget"):
        parse_budget(text)
