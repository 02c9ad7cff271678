"""`eager`: the target called as is (the reference mode of every pattern kind)."""

from __future__ import annotations

from typing import ClassVar

from fuzz_core.modes.base import Mode


class EagerMode(Mode):
    passes_inputs_through: ClassVar[bool] = True  # Note [Input copies] in fuzz_core/execution.py


def make_eager(name: str, options: dict) -> Mode:
    return EagerMode(name="eager", options=options)
