"""Global options are hoisted in front of the subcommand; what follows `--` is never touched."""

from __future__ import annotations

from agent.cli.argv import hoist_global_options


def test_options_after_the_subcommand_move_to_the_front_with_their_values() -> None:
    assert hoist_global_options(["review", "list", "--json", "--db", "sqlite:///r.db", "--all"]) == [
        "--json", "--db", "sqlite:///r.db", "review", "list", "--all"]


def test_the_equals_form_is_one_token() -> None:
    assert hoist_global_options(["stats", "--db=sqlite:///r.db"]) == ["--db=sqlite:///r.db", "stats"]


def test_arguments_after_a_double_dash_stay_where_they_are() -> None:
    assert hoist_global_options(["review", "reject", "3", "--", "--json"]) == ["review", "reject", "3", "--", "--json"]


def test_a_command_line_without_global_options_is_unchanged() -> None:
    argv = ["fuzz", "api", "torch.relu", "--pattern", "NaN_Inf"]
    assert hoist_global_options(argv) == argv
