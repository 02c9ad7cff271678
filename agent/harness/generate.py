"""Build fuzz_core harness specs from a pattern and a target API (pure; no database)."""

from __future__ import annotations

import ast
import hashlib
from typing import Any

from agent.patterns import BugPattern, OracleKind
from fuzz_core.api_names import check_api

# Pattern oracle → fuzz_core oracle name
ORACLE_NAMES = {
    OracleKind.ValueCorrectness: "value",
    OracleKind.NaNConsistency: "nan_inf",
    OracleKind.ShapeDtypeConsistency: "shape_dtype",
    OracleKind.ExceptionConsistency: "exception",
    OracleKind.Crash: "crash",
}
FUZZ_CORE_SPECIAL_VALUES = ("nan", "inf", "-inf", "-0.0", "denormal", "huge", "tiny")
FUZZ_CORE_SHAPES = ("empty", "zero_size", "scalar", "large")
FLOATING = ("float32", "float64", "float16", "bfloat16")
PRECISIONS = {"full": ("float32",), "half": ("float16",), "mixed": ("float32", "bfloat16")}


def stable_seed(*parts: Any) -> int:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def spec_trigger(trigger: dict[str, Any]) -> dict[str, Any]:
    """Keep the trigger conditions the fuzz core understands, drop the rest."""
    out: dict[str, Any] = {}
    values = [v for v in trigger.get("special_values", []) if v in FUZZ_CORE_SPECIAL_VALUES]
    if values:
        out["special_values"] = values
    if trigger.get("layout") in ("noncontiguous", "channels_last"):
        out["layout"] = trigger["layout"]
    shapes = [s for s in trigger.get("shape", []) if s in FUZZ_CORE_SHAPES]
    if shapes:
        out["shape"] = shapes
    if trigger.get("dtypes"):
        out["dtypes"] = list(trigger["dtypes"])
    if trigger.get("params"):
        out["params"] = {name: param_value(value) for name, value in trigger["params"].items()}
    return out


def param_value(text: Any) -> Any:
    """Pattern parameters are text; literals become values ("0" → 0, "True" → True, "(2, 2)" → (2, 2)),
    conditions such as "> 0" stay text for the fuzz core to satisfy."""
    if not isinstance(text, str):
        return text
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return list(value) if isinstance(value, tuple) else value


def spec_dtype(pattern: BugPattern, trigger: dict[str, Any]) -> str:
    """The dtype inputs are made in: float32 when the test mode itself lowers precision."""
    if pattern.test_mode.name.startswith(("dtype:", "autocast:")):
        return "float32"
    for dtype in trigger.get("dtypes", []):
        if dtype in FLOATING:
            return dtype
    return "float32"


def reference_mode_for(reference: str, test: str) -> str:
    """A gradient test mode compares gradients, so its reference must produce gradients too.

    Extraction writes a gradient report as eager → grad; the fuzz core's pairs are analytic `grad`
    against float64 central differences (`grad:numeric`), and `grad:compile:*` against eager `grad`.
    """
    if not test.startswith("grad") or reference.startswith("grad"):
        return reference
    return "grad:numeric" if test in ("grad", "grad:eager") else "grad"


def build_spec(pattern: BugPattern, target_api: str, trigger: dict[str, Any], *, in_opinfo: bool,
               seed_key: Any, dtype: str | None = None) -> dict[str, Any]:
    """A fuzz_core HarnessSpec as a dict (validated by fuzz_core when the worker rebuilds it).

    ApiRejected when `target_api` is not one of torch's public callables (fuzz_core.api_names).
    """
    check_api(target_api)
    fuzz_trigger = spec_trigger(trigger)
    return {
        "api": target_api,
        "reference_mode": reference_mode_for(pattern.reference_mode.name, pattern.test_mode.name),
        "test_mode": pattern.test_mode.name,
        "mode_options": dict(pattern.test_mode.options),
        "input_source": "opinfo" if in_opinfo else "signature",
        "oracle": ORACLE_NAMES[pattern.oracle.kind],
        "trigger": fuzz_trigger,
        "dtype": dtype or spec_dtype(pattern, fuzz_trigger),
        "seed": stable_seed(seed_key, target_api),
        "kind": pattern.kind.value,
    }


def with_precision(spec: dict[str, Any], precision: str) -> list[dict[str, Any]]:
    """`--precision`: run value harnesses at full (fp32), half (fp16) or mixed (fp32 + bf16) precision.

    Harnesses whose test mode already lowers precision keep their float32 inputs.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}")
    if str(spec.get("test_mode", "")).startswith(("dtype:", "autocast:")) or spec.get("dtype", "float32") not in FLOATING:
        return [spec]
    return [{**spec, "dtype": dtype} for dtype in PRECISIONS[precision]]
