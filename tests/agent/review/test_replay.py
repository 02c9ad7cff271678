"""`review show --replay` recomputes a finding's values in the sandbox; they agree with the worker's figures."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from agent.review.replay import replay_finding
from fuzz_core.inputs import Sample
from fuzz_core.saved_inputs import save_inputs

# A confirmed finding: torch.nn.functional.lp_pool1d(x, 4.0, 1) raises x to the 4th power in float16, so at
# x = -26 (26**4 > 65504) it is inf in float16 while float32 and float64 give 26. The worker minimised it to
# that one-element input.
LP_POOL_SPEC = {"api": "torch.nn.functional.lp_pool1d", "reference_mode": "eager", "test_mode": "dtype:float16",
                "mode_options": {}, "input_source": "described", "oracle": "nan_inf", "trigger": {},
                "inputs": {"args": [{"kind": "tensor", "tensor": {"shape": [2, 8], "low": -30.0, "high": 30.0}},
                                    {"kind": "float", "value": 4.0}, {"kind": "int", "value": 1}]},
                "dtype": "float32", "seed": 1776983066, "kind": "Precision_Mismatch"}


def test_replay_in_the_sandbox_gives_the_values_the_worker_measured(tmp_path: Path) -> None:
    from fuzz_core.sandbox import SandboxUnavailable, require_bwrap

    try:
        require_bwrap()
    except SandboxUnavailable as exc:
        pytest.fail(f"bubblewrap is part of the set-up (make setup): {exc}")
    inputs = tmp_path / "minimised.safetensors"
    save_inputs(Sample((torch.tensor([[-26.0]]), 4.0, 1), {}, None, "test"), str(inputs))
    replay = replay_finding(LP_POOL_SPEC, str(inputs), "nan_inf:out")
    assert replay.error is None, replay.error
    assert (replay.reference_mode, replay.test_mode, replay.output) == ("eager", "dtype:float16", "out")
    [worst] = replay.worst
    assert worst.test == "inf"
    assert worst.reference == pytest.approx(26.0)  # the figures fuzz_core stored for this input
    assert worst.float64 == pytest.approx(26.0)


def test_a_replay_that_cannot_run_says_why(tmp_path: Path) -> None:
    missing = tmp_path / "gone.safetensors"
    missing.write_bytes(b"not a safetensors file")
    replay = replay_finding(LP_POOL_SPEC, str(missing), "nan_inf:out")
    assert replay.error and not replay.worst
