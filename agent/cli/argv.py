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

        def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True,  # type: ignore[no-untyped-def, override]
                 **extra):
            """Usage errors as one line on stderr and exit 2, like every error of ours (not a boxed panel)."""
            if not standalone_mode:
                return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            import sys

            from typer._click.exceptions import ClickException, NoArgsIsHelpError
            from typer.exceptions import Abort

            try:
                code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            except NoArgsIsHelpError as exc:
                exc.show()
                sys.exit(exc.exit_code)
            except ClickException as exc:
                sys.stderr.write(usage_error_line(exc) + "\n")
                sys.exit(exc.exit_code)
            except Abort:
                sys.stderr.write("Aborted.\n")
                sys.exit(1)
            sys.exit(code if isinstance(code, int) else 0)

    return GlobalOptionsGroup


def usage_error_line(exc) -> str:  # type: ignore[no-untyped-def]
    """`error: <what was wrong> (transfuzz CMD --help)`, control characters removed (it may quote argv)."""
    from agent.text_safety import one_line

    message = one_line(exc.format_message()).replace("Value error, ", "")
    ctx = getattr(exc, "ctx", None)
    where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    return f"error: {message}{where}"

    return GlobalOptionsGroup
