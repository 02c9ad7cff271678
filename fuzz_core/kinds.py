"""Pattern kinds and the mode pair and oracle each one checks by default."""

from __future__ import annotations

import difflib

KIND_MODE_PAIRS: dict[str, tuple[str, str]] = {
    "JIT_Eager_Mismatch": ("eager", "jit.trace"),
    "Compile_Eager_Mismatch": ("eager", "compile:inductor"),
    "Precision_Mismatch": ("eager", "dtype:float16"),
    "Layout_Mismatch": ("eager", "layout:noncontiguous"),
    "Variant_Mismatch": ("eager", "variant:out"),
    "Device_Mismatch": ("eager", "device:cuda"),
    "NaN_Inf": ("eager", "eager"),
    "Exception_Mismatch": ("eager", "compile:inductor"),
    "Crash": ("eager", "eager"),
    # Analytic reverse-mode gradients against float64 central differences (gradcheck's rule).
    "Gradient_Mismatch": ("grad:numeric", "grad"),
}

KIND_ORACLES: dict[str, str] = {
    "NaN_Inf": "nan_inf",
    "Exception_Mismatch": "exception",
    "Crash": "crash",
}


class UnknownKind(ValueError):
    """A pattern kind that fuzz_core does not know, with near matches."""

    def __init__(self, name: str, suggestions: list[str]) -> None:
        self.name = name
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown pattern kind {name!r}{hint} (known: {', '.join(KIND_MODE_PAIRS)})")


def oracle_for_kind(kind: str) -> str:
    return KIND_ORACLES.get(kind, "value")


def resolve_kind(name: str) -> str:
    """The canonical kind for `name` (case and separator tolerant); UnknownKind with suggestions otherwise."""
    if name in KIND_MODE_PAIRS:
        return name
    folded = {k.lower().replace("_", "").replace("-", ""): k for k in KIND_MODE_PAIRS}
    key = name.lower().replace("_", "").replace("-", "")
    if key in folded:
        return folded[key]
    near = difflib.get_close_matches(key, list(folded), n=3, cutoff=0.5)
    raise UnknownKind(name, [folded[n] for n in near])
