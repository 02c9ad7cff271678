"""A finding's reference/test/float64 outputs saved beside its input and read back (safetensors, no pickle)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from fuzz_core import HarnessSpec
from fuzz_core.runner import run_harness
from fuzz_core.saved_inputs import load_inputs
from fuzz_core.saved_outputs import load_outputs, save_outputs

# float16 logit with eps=1e-6: the clamp bound 1 - 1e-6 rounds to 1.0, so logit is inf where float64 is finite.
LOGIT_FP16 = HarnessSpec(api="torch.logit", reference_mode="eager", test_mode="dtype:float16", oracle="nan_inf",
                         trigger={"params": {"eps": 1e-06}}, seed=1776983066, kind="Precision_Mismatch")


def test_a_confirmed_finding_keeps_its_three_outputs(tmp_path: Path) -> None:
    result = run_harness(LOGIT_FP16, budget_s=20, workdir=tmp_path)
    assert result.verdict == "confirmed", result.reason
    outputs = load_outputs(result.evidence["outputs_path"])
    assert Path(result.evidence["outputs_path"]).parent == tmp_path
    reference, test, fp64 = outputs["reference"], outputs["test"], outputs["fp64"]
    assert (reference.dtype, test.dtype, fp64.dtype) == (torch.float32, torch.float16, torch.float64)
    only_test = torch.isinf(test) & torch.isfinite(fp64) & torch.isfinite(reference)
    assert bool(only_test.any())
    x, eps = load_inputs(result.evidence["inputs_path"])["args"]
    clamped = x.to(torch.float16).clamp(eps, 1 - eps)  # logit's own clamp, in float16
    assert eps == 1e-6 and bool((clamped[only_test] == 1.0).all())
    assert torch.equal(fp64, torch.logit(x.double(), eps=eps))


def test_unsaved_dtypes_say_why_and_write_nothing(tmp_path: Path) -> None:
    path = tmp_path / "outputs.safetensors"
    complex_out = torch.ones(2, dtype=torch.complex64)
    reason = save_outputs({"reference": complex_out, "test": complex_out, "fp64": complex_out.to(torch.complex128)},
                          path, "out")
    assert reason is not None and "complex64" in reason and not path.exists()


def test_only_saved_outputs_files_are_read(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    other = tmp_path / "inputs.safetensors"
    save_file({"reference": torch.ones(1), "test": torch.ones(1), "fp64": torch.ones(1)}, str(other))
    with pytest.raises(ValueError, match="not a saved-outputs file"):
        load_outputs(str(other))
    damaged = tmp_path / "damaged.safetensors"
    damaged.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{broken}")
    with pytest.raises(ValueError, match="cannot be read"):
        load_outputs(str(damaged))
