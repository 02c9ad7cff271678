"""Check a report against PyTorch's rules for fuzzer-found bugs (pt2-bug-report template).

The template asks for: default rtol/atol; no comparison of max/min indices; a higher-precision
(fp64) baseline as ``torch._dynamo.utils.same(..., fp64_ref=...)`` does; equal RNG state
(``torch._inductor.config.fallback_random = True`` and a reseed); a minimal standalone repro; the
backend ablation; collect_env. Reports that ignore them are closed automatically, so each report
carries this checklist and says plainly what is unmet or not shown, instead of claiming it.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Literal

from pydantic import BaseModel

from fuzz_core.evidence import Evidence
from fuzz_core.oracles.tolerance import default_tolerance

Status = Literal["met", "not_met", "unclear", "n/a"]

# APIs whose results are indices; comparing them is a known false alarm (ties).
_INDEX_APIS = {"argmax", "argmin", "argsort"}
# APIs that return (values, indices): only the values may be compared.
_VALUES_AND_INDICES_APIS = {"max", "min", "sort", "topk", "kthvalue", "mode", "median", "nanmedian", "cummax", "cummin"}

# close_enough: the fuzzer's own comparison, which the repro scripts paste in (fuzz_core/oracles/closeness.py).
_COMPARISONS = {"assert_close", "allclose", "isclose", "assertEqual", "same", "close_enough"}
_PROJECT_IMPORT = re.compile(r"^\s*(?:from|import)\s+(?:agent|fuzz_core|db|transfuzz)\b", re.MULTILINE)


class RuleCheck(BaseModel):
    rule: str
    status: Status
    detail: str


def _is_compile(mode: str) -> bool:
    return mode.startswith("compile:")


def check_rules(
    *,
    api: str,
    reference_mode: str,
    test_mode: str,
    evidence: Evidence | dict[str, Any],
    repro: str,
    collect_env_ok: bool,
    dtype: str | None = None,
) -> list[RuleCheck]:
    evidence = Evidence.of(evidence)
    compiled = _is_compile(reference_mode) or _is_compile(test_mode)
    checks: list[RuleCheck] = []

    checks.append(_tolerance_rule(evidence, repro, dtype))

    leaf = api.rsplit(".", 1)[-1]
    if leaf in _INDEX_APIS:
        checks.append(RuleCheck(rule="no index comparison", status="not_met", detail=f"{leaf} returns indices, which differ legitimately on ties"))
    elif leaf in _VALUES_AND_INDICES_APIS:
        checks.append(RuleCheck(rule="no index comparison", status="unclear", detail=f"{leaf} returns indices too; the repro must compare values only"))
    else:
        checks.append(RuleCheck(rule="no index comparison", status="met", detail="the API returns no indices"))

    has_fp64 = evidence.ref_error_vs_fp64 is not None and evidence.test_error_vs_fp64 is not None
    repro_fp64 = "fp64_ref" in repro or "float64" in repro or ".double()" in repro
    if has_fp64 and (repro_fp64 or not repro):
        checks.append(RuleCheck(rule="fp64 baseline", status="met", detail="both modes compared against a float64 computation"))
    elif has_fp64:
        checks.append(RuleCheck(rule="fp64 baseline", status="unclear", detail="the harness compared against float64, the repro script does not show it"))
    else:
        checks.append(RuleCheck(rule="fp64 baseline", status="not_met", detail="no float64 reference error recorded"))

    if not compiled:
        checks.append(RuleCheck(rule="equal RNG state", status="n/a", detail="no torch.compile mode involved"))
    elif "fallback_random = True" in repro or "fallback_random=True" in repro or _fallback_random(evidence):
        checks.append(RuleCheck(rule="equal RNG state", status="met", detail="torch._inductor.config.fallback_random = True"))
    else:
        checks.append(RuleCheck(rule="equal RNG state", status="not_met", detail="set torch._inductor.config.fallback_random = True and reseed"))

    if not repro.strip():
        checks.append(RuleCheck(rule="minimal standalone repro", status="not_met", detail="no repro script stored"))
    elif _PROJECT_IMPORT.search(repro):
        checks.append(RuleCheck(rule="minimal standalone repro", status="not_met", detail="the repro imports TransFuzz code"))
    else:
        checks.append(RuleCheck(rule="minimal standalone repro", status="met", detail="plain torch script"))

    ablation = evidence.backend_ablation
    if not compiled:
        checks.append(RuleCheck(rule="backend ablation", status="n/a", detail="no torch.compile mode involved"))
    elif isinstance(ablation, dict) and ablation:
        checks.append(RuleCheck(rule="backend ablation", status="met", detail=", ".join(f"{k}: {v}" for k, v in ablation.items())))
    else:
        checks.append(RuleCheck(rule="backend ablation", status="not_met", detail="run with eager, aot_eager and inductor backends"))

    checks.append(
        RuleCheck(rule="collect_env", status="met" if collect_env_ok else "not_met", detail="included below" if collect_env_ok else "collect_env did not run")
    )
    return checks


def _explicit_tolerances(repro: str) -> list[str] | None:
    """Comparison calls in the repro that pass rtol/atol; None when the script does not parse."""
    try:
        tree = ast.parse(repro)
    except SyntaxError:
        return None
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in _COMPARISONS and any(k.arg in ("rtol", "atol") for k in node.keywords):
            found.append(ast.unparse(node)[:80])
    return found


def _tolerance_rule(evidence: Evidence, repro: str, dtype: str | None) -> RuleCheck:
    rule = "default tolerances"
    if evidence.mismatch_kind == "nan_inf":
        return RuleCheck(rule=rule, status="n/a", detail="NaN/Inf where the float64 value is finite: no tolerance applies")
    used = evidence.tolerance_used
    default = default_tolerance(dtype)  # the one tolerance table (fuzz_core/oracles/tolerance.py)
    if used is not None and default is not None and used.rtol is not None and used.atol is not None:
        if (used.rtol, used.atol) != default:
            return RuleCheck(rule=rule, status="not_met", detail=f"harness used rtol={used.rtol}, atol={used.atol}; {dtype} defaults are rtol={default[0]}, atol={default[1]}")
    if evidence.default_tolerances is False:
        return RuleCheck(rule=rule, status="not_met", detail="the harness did not use the default tolerances")
    explicit = _explicit_tolerances(repro) if repro.strip() else []
    if explicit is None:
        return RuleCheck(rule=rule, status="unclear", detail="the repro script does not parse")
    if explicit and default is not None and _all_default(repro, default):
        return RuleCheck(rule=rule, status="met", detail=f"torch.testing defaults for {dtype}, written out in the repro")
    if explicit:
        return RuleCheck(rule=rule, status="unclear", detail=f"the repro passes rtol/atol explicitly ({explicit[0]}); make sure they are the defaults")
    return RuleCheck(rule=rule, status="met", detail="torch.testing defaults for the dtype")


def _all_default(repro: str, default: tuple[float, float]) -> bool:
    """Every rtol=/atol= a comparison call in the repro passes is a number equal to the dtype's default."""
    for node in ast.walk(ast.parse(repro)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name not in _COMPARISONS:
            continue
        for keyword in node.keywords:
            if keyword.arg in ("rtol", "atol"):
                value = keyword.value
                if not (isinstance(value, ast.Constant) and isinstance(value.value, (int, float))):
                    return False
                if value.value != default[0 if keyword.arg == "rtol" else 1]:
                    return False
    return True


def _fallback_random(evidence: Evidence) -> bool:
    """fallback_random recorded as true at the top level or in the evidence's config (any prefix)."""
    if evidence.fallback_random is True:
        return True
    config = evidence.config
    return isinstance(config, dict) and any(str(k).rsplit(".", 1)[-1] == "fallback_random" and v is True
                                            for k, v in config.items())


def all_met(checks: list[RuleCheck]) -> bool:
    return all(c.status in ("met", "n/a") for c in checks)
