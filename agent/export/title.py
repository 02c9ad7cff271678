"""The report title: a bracket naming the divergence (from the mode pair) and one line about the API."""

from __future__ import annotations

from agent.text_safety import one_line

# The first test-mode prefix that matches names the bracket.
_MODE_BRACKETS: tuple[tuple[str, str], ...] = (
    ("compile:", "Eager/Compile"),
    ("jit.", "Eager/JIT"),
    ("dtype:", "Precision"),
    ("autocast:", "Precision"),
    ("layout:", "Layout"),
    ("variant:", "Variant"),
    ("device:", "CPU/CUDA"),
    ("quant:", "Quantization"),
    ("vmap", "vmap/Loop"),
    ("grad", "Gradient"),
)

# Kinds whose mode pair does not name what went wrong (both sides may be eager).
_KIND_BRACKETS = {
    "NaN_Inf": "NaN/Inf",
    "Nondeterminism": "Nondeterminism",
    "Crash": "Crash",
}

# Mode names in words, for titles and descriptions.
_MODE_WORDS = {
    "eager": "eager",
    "jit.trace": "torch.jit.trace",
    "jit.script": "torch.jit.script",
    "vmap": "torch.vmap",
    "grad": "autograd",
    "device:cuda": "CUDA",
}


def mode_words(mode: str) -> str:
    """``compile:inductor`` → ``torch.compile (inductor)``; ``dtype:float16`` → ``float16``."""
    if mode in _MODE_WORDS:
        return _MODE_WORDS[mode]
    family, _, detail = mode.partition(":")
    if family == "compile":
        return f"torch.compile ({detail or 'inductor'})"
    if family == "autocast":
        return f"autocast ({detail})"
    if family == "variant":
        return {"out": "the out= variant", "inplace": "the in-place variant", "method": "the Tensor method"}.get(
            detail, f"the {detail} variant"
        )
    if family in ("dtype", "layout"):
        return detail
    if family == "quant":
        return f"{detail} quantization"
    if family == "grad" and detail.startswith("device:"):
        return f"autograd on {mode_words(detail)}"
    if family == "grad" and detail.startswith("compile:"):
        return f"autograd through {mode_words(detail)}"
    return mode


def bracket(reference_mode: str, test_mode: str, kind: str, verdict: str) -> str:
    """E.g. ``Eager/Compile Divergence``; a crash or hang names its mode pair too."""
    family = None
    for mode in (test_mode, reference_mode):
        for prefix, name in _MODE_BRACKETS:
            if mode.startswith(prefix):
                family = name
                break
        if family:
            break
    if verdict == "crash":
        return f"{family} Crash" if family else "Crash"
    if verdict == "hang":
        return f"{family} Hang" if family else "Hang"
    if kind in _KIND_BRACKETS:
        return _KIND_BRACKETS[kind]
    if kind == "Exception_Mismatch":
        return f"{family} Exception Divergence" if family else "Exception Divergence"
    return f"{family} Divergence" if family else "Divergence"


def headline(api: str, reference_mode: str, test_mode: str, verdict: str, condition: str) -> str:
    """The part of the title after the bracket."""
    where = f" on {condition}" if condition else ""
    if verdict == "crash":
        return f"{api} crashes under {mode_words(test_mode)}{where}"
    if verdict == "hang":
        return f"{api} hangs under {mode_words(test_mode)}{where}"
    if reference_mode == test_mode:
        return f"{api} gives wrong results in {mode_words(test_mode)}{where}"
    return f"{api} under {mode_words(test_mode)} differs from {mode_words(reference_mode)}{where}"


def title(api: str, reference_mode: str, test_mode: str, kind: str, verdict: str, condition: str) -> str:
    """One line, control characters removed (the API and condition may come from an issue); Markdown
    escaping is the renderer's job, so index.json keeps the plain text."""
    text = f"[{bracket(reference_mode, test_mode, kind, verdict)}] {headline(api, reference_mode, test_mode, verdict, condition)}"
    return one_line(text)
