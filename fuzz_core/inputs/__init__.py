"""Input sources for harnesses: OpInfo samples, signature-driven generation, typed descriptions, explicit code; triggers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Sample:
    """One call of the target: positional args, keyword args, and (for nn.Module targets) constructor kwargs."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    ctor: dict[str, Any] | None = None
    origin: str = ""

    def tree(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.args, self.kwargs)

    def with_tree(self, tree: tuple[tuple[Any, ...], dict[str, Any]], origin: str | None = None) -> Sample:
        args, kwargs = tree
        return Sample(tuple(args), dict(kwargs), self.ctor, self.origin if origin is None else origin)


class InputError(RuntimeError):
    """The input source could not produce any input (a harness/tool problem, not a target bug)."""


class NoInputs(RuntimeError):
    """The source has nothing for this API/dtype (the harness is not applicable)."""
