"""`eager`: the target called as is (the reference mode of every pattern kind)."""

from __future__ import annotations

from fuzz_core.modes.base import Mode


def make_eager(name: str, options: dict) -> Mode:
    return Mode(name="eager", options=options)
