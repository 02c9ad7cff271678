"""Mode registry: `get_mode(name)` builds the mode a harness names; `list_modes()` lists them."""

from __future__ import annotations

import difflib
from typing import Any, Callable

from fuzz_core.modes.base import Mode, NotApplicable, bound_callable
from fuzz_core.modes.compile import make_compile
from fuzz_core.modes.device import make_device
from fuzz_core.modes.dtype import make_dtype
from fuzz_core.modes.eager import make_eager
from fuzz_core.modes.grad import make_grad
from fuzz_core.modes.jit import make_jit
from fuzz_core.modes.layout import make_layout
from fuzz_core.modes.variant import make_variant

MODE_NAMES: tuple[str, ...] = (
    "eager", "jit.trace", "jit.script", "compile:eager", "compile:aot_eager", "compile:inductor",
    "dtype:float16", "dtype:bfloat16", "autocast:float16", "autocast:bfloat16",
    "layout:noncontiguous", "layout:channels_last", "variant:out", "variant:inplace", "variant:method",
    "variant:decomp",
    "device:cuda", "grad", "grad:numeric", "grad:compile:inductor", "grad:device:cuda",
)

_FAMILIES: dict[str, Callable[[str, dict], Mode]] = {
    "eager": make_eager, "jit": make_jit, "compile": make_compile, "dtype": make_dtype,
    "autocast": make_dtype, "layout": make_layout, "variant": make_variant, "device": make_device,
    "grad": make_grad,
}


class UnknownMode(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def _family(name: str) -> str:
    return name.split(":", 1)[0].split(".", 1)[0]


def get_mode(name: str, options: dict[str, Any] | None = None) -> Mode:
    """The mode called `name`; `compile:<backend>` accepts any registered dynamo backend."""
    factory = _FAMILIES.get(_family(name))
    if factory is not None:
        try:
            return factory(name, dict(options or {}))
        except KeyError:
            pass
    near = difflib.get_close_matches(name, MODE_NAMES, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    raise UnknownMode(f"unknown mode {name!r}{hint}")


def list_modes() -> list[str]:
    return list(MODE_NAMES)


__all__ = ["Mode", "NotApplicable", "UnknownMode", "bound_callable", "get_mode", "list_modes", "MODE_NAMES"]
