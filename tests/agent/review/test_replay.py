"""`review show --replay` recomputes a finding's values in the sandbox; they agree with the worker's figures."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from agent.review.replay import replay_finding
from fuzz_core.inputs import Sample
from fuzz_core.saved_inputs import save_inputs

# A finding of the sample run: torch.logit(x, eps=1e-06) at x = 1 is finite in float32 and float64, inf in float16.
LOGIT_SPEC = {"api": "torch.logit", "reference_mode": "eager", "test_mode": "dtype:float16", "mode_options": {},
              "input_source": "opinfo", "oracle": "nan_inf", "trigger": {"params": {"eps": 1e-06}},
              "dtype": "float32", "seed": 1, "kind": "Precision_Mismatch"}


def test_replay_in_the_sandbox_gives_the_values_the_worker_measured(tmp_path: Path) -> None:
    from fuzz_core.sandbox import SandboxUnavailable, require_bwrap

    try:
        require_bwrap()
    except SandboxUnavailable as exc:
        pytest.fail(f"bubblewrap is part of the set-up (make setup): {exc}")
    inputs = tmp_path / "minimised.safetensors"
    save_inputs(Sample((torch.tensor(1.0), 1e-06), {}, None, "test"), str(inputs))
    replay = replay_finding(LOGIT_SPEC, str(inputs), "nan_inf:out")
    assert replay.error is None, replay.error
    assert (replay.reference_mode, replay.test_mode, replay.output) == ("eager", "dtype:float16", "out")
    [worst] = replay.worst
    assert worst.test == "inf"
    assert worst.reference == pytest.approx(13.80231761932373)  # the figures fuzz_core stored for this input
    assert worst.float64 == pytest.approx(13.815509557935018)


def test_a_replay_that_cannot_run_says_why(tmp_path: Path) -> None:
    missing = tmp_path / "gone.safetensors"
    missing.write_bytes(b"not a safetensors file")
    replay = replay_finding(LOGIT_SPEC, str(missing), "nan_inf:out")
    assert replay.error and not replay.worst
