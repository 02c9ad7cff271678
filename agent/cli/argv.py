"""Global options anywhere on the command line: `transfuzz review list --json` means `transfuzz --json review list`.

Click only parses a group's options before the subcommand's name. Users type them at the end as
often as at the start, so main() moves them forward before Click sees the arguments. Everything
after a bare `--` is left alone (an argument there is data, not an option).
"""

from __future__ import annotations

from collections.abc import Sequence

# Global options: name -> whether it takes a value.
GLOBAL_OPTIONS = {"--db": True, "--json": False}


def hoist_global_options(argv: Sequence[str]) -> list[str]:
    """The same arguments with every global option (and its value) moved to the front, in order."""
    front: list[str] = []
    rest: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            rest.extend(argv[index:])
            break
        name = token.split("=", 1)[0]
        if name in GLOBAL_OPTIONS:
            takes_value = GLOBAL_OPTIONS[name]
            if takes_value and "=" not in token and index + 1 < len(argv):
                front.extend(argv[index:index + 2])
                index += 2
                continue
            front.append(token)
        else:
            rest.append(token)
        index += 1
    return front + rest


def hoisting_group():  # type: ignore[no-untyped-def]
    """The root command's class: it hoists global options before Click parses (CLI, tests and `python -m` alike)."""
    from typer.core import TyperGroup

    class GlobalOptionsGroup(TyperGroup):
        def parse_args(self, ctx, args):  # type: ignore[no-untyped-def, override]
            return super().parse_args(ctx, hoist_global_options(args))

    return GlobalOptionsGroup
