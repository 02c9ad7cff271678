"""Sparse seed inputs are not fuzzed yet: every mode says so (not_applicable), none fails while preparing them."""

from __future__ import annotations

import pytest

from fuzz_core import HarnessSpec, run_harness


@pytest.mark.parametrize("test_mode", ["dtype:float16", "layout:noncontiguous", "eager"])
def test_a_sparse_op_is_not_applicable_under_any_mode(test_mode: str) -> None:
    # a scalar-shaped trigger makes the float16 cast reshape its inputs, which sparse tensors do not support
    result = run_harness(HarnessSpec(api="torch.sspaddmm", test_mode=test_mode, input_source="signature",
                                     trigger={"special_values": ["huge"], "shape": ["scalar"]}, max_executions=20))
    assert result.verdict == "not_applicable", result.reason
    assert "sparse inputs are not fuzzed yet" in result.reason
