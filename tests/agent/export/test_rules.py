"""PyTorch's fuzzer rules, checked on a report's evidence and repro script."""

from __future__ import annotations

from typing import Any

from agent.export.rules import all_met, check_rules

GOOD_REPRO = """import torch
import torch._inductor.config
torch._inductor.config.fallback_random = True
from torch._dynamo.utils import same
x = torch.randn(8)
ref = torch.cumsum(x, 0)
res = torch.compile(torch.cumsum)(x, 0)
fp64 = torch.cumsum(x.double(), 0)
assert same(ref, res, fp64_ref=fp64)
"""
FULL_EVIDENCE = {
    "ref_error_vs_fp64": 1e-7,
    "test_error_vs_fp64": 0.5,
    "backend_ablation": {"eager": "match", "aot_eager": "match", "inductor": "mismatch"},
}


def _status(checks: list[Any]) -> dict[str, str]:
    return {c.rule: c.status for c in checks}


def test_a_compile_report_that_follows_every_rule() -> None:
    checks = check_rules(
        api="torch.cumsum", reference_mode="eager", test_mode="compile:inductor",
        evidence=FULL_EVIDENCE, repro=GOOD_REPRO, collect_env_ok=True,
    )
    assert all_met(checks), checks
    assert len(checks) == 7


def test_each_missing_requirement_is_named() -> None:
    bad_repro = "from fuzz_core.spec import HarnessSpec\nimport torch\ntorch.testing.assert_close(a, b, atol=1e-2)\n"
    checks = check_rules(
        api="torch.argmax", reference_mode="eager", test_mode="compile:inductor",
        evidence={}, repro=bad_repro, collect_env_ok=False,
    )
    assert _status(checks) == {
        "default tolerances": "unclear",
        "no index comparison": "not_met",
        "fp64 baseline": "not_met",
        "equal RNG state": "not_met",
        "minimal standalone repro": "not_met",
        "backend ablation": "not_met",
        "collect_env": "not_met",
    }
    assert not all_met(checks)


def test_compile_rules_do_not_apply_to_other_mode_pairs() -> None:
    checks = check_rules(
        api="torch.topk", reference_mode="eager", test_mode="layout:noncontiguous",
        evidence={"ref_error_vs_fp64": 0.0, "test_error_vs_fp64": 1.0, "default_tolerances": False, "atol": 0.1},
        repro="import torch\nx = torch.randn(4, dtype=torch.float64)\n", collect_env_ok=True,
    )
    status = _status(checks)
    assert status["equal RNG state"] == "n/a" and status["backend ablation"] == "n/a"
    assert status["no index comparison"] == "unclear"  # topk returns indices too
    assert status["default tolerances"] == "not_met"
    assert status["fp64 baseline"] == "met"


def test_tolerances_are_judged_from_the_evidence_and_real_calls_only() -> None:
    # An assignment named atol is not a comparison with custom tolerances.
    repro = "import torch\nrtol, atol = TOLERANCE.get(x.dtype, (0.0, 0.0))\ntorch.testing.assert_close(a, b, equal_nan=True)\n"

    def tolerance_status(evidence: dict[str, Any], script: str = repro) -> str:
        checks = check_rules(api="torch.mm", reference_mode="eager", test_mode="jit.trace", evidence=evidence,
                             repro=script, collect_env_ok=True, dtype="float32")
        return _status(checks)["default tolerances"]

    assert tolerance_status({"tolerance": {"rtol": 1.3e-6, "atol": 1e-5}}) == "met"
    assert tolerance_status({"tolerance": {"rtol": 1e-3, "atol": 1e-3}}) == "not_met"
    assert tolerance_status({}, "torch.allclose(a, b, rtol=0.1)\n") == "unclear"
    assert tolerance_status({}, "def broken(:\n") == "unclear"


def test_fallback_random_from_the_recorded_config() -> None:
    def rng_status(evidence: dict[str, Any], repro: str = "import torch\n") -> str:
        checks = check_rules(api="torch.dropout", reference_mode="eager", test_mode="compile:inductor",
                             evidence=evidence, repro=repro, collect_env_ok=True)
        return _status(checks)["equal RNG state"]

    assert rng_status({"config": {"inductor.fallback_random": False, "mode.fallback_random": True}}) == "met"
    assert rng_status({"config": {"inductor.fallback_random": False}}) == "not_met"
    assert rng_status({}, "import torch._inductor.config\ntorch._inductor.config.fallback_random = True\n") == "met"


def test_the_tolerance_rule_reads_the_engines_one_table() -> None:
    import torch

    from fuzz_core.oracles.tolerance import DTYPE_PRECISIONS

    rtol, atol = DTYPE_PRECISIONS[torch.bfloat16]
    checks = check_rules(api="torch.add", reference_mode="eager", test_mode="dtype:bfloat16",
                         evidence={"tolerance": {"rtol": rtol, "atol": atol}}, repro="", collect_env_ok=True,
                         dtype="bfloat16")
    assert next(c for c in checks if c.rule == "default tolerances").status == "met"
