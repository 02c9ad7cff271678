"""A finding's reference/test/float64 outputs saved beside its input and read back (safetensors, no pickle)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from fuzz_core import HarnessSpec
from fuzz_core.runner import run_harness
from fuzz_core.saved_inputs import load_inputs
from fuzz_core.saved_outputs import load_outputs, save_outputs

# float16 lp_pool1d with norm_type=4 raises x to the 4th power in float16: wherever |x| >= 16, x**4 exceeds 65504
# and the output is inf, while float32 and float64 give |x| (at most 30, far inside float16's range).
LP_POOL_FP16 = HarnessSpec(
    api="torch.nn.functional.lp_pool1d", reference_mode="eager", test_mode="dtype:float16", oracle="nan_inf",
    input_source="described", seed=1776983066, kind="Precision_Mismatch",
    inputs={"args": [{"kind": "tensor", "tensor": {"shape": [2, 8], "low": -30.0, "high": 30.0}},
                     {"kind": "float", "value": 4.0}, {"kind": "int", "value": 1}]})


def test_a_confirmed_finding_keeps_its_three_outputs(tmp_path: Path) -> None:
    result = run_harness(LP_POOL_FP16, budget_s=20, workdir=tmp_path)
    assert result.verdict == "confirmed", result.reason
    outputs = load_outputs(result.evidence["outputs_path"])
    assert Path(result.evidence["outputs_path"]).parent == tmp_path
    reference, test, fp64 = outputs["reference"], outputs["test"], outputs["fp64"]
    assert (reference.dtype, test.dtype, fp64.dtype) == (torch.float32, torch.float16, torch.float64)
    only_test = torch.isinf(test) & torch.isfinite(fp64) & torch.isfinite(reference)
    assert bool(only_test.any())
    x, norm_type, kernel_size = load_inputs(result.evidence["inputs_path"])["args"]
    powered = x.to(torch.float16).pow(norm_type)  # lp_pool1d's own power, in float16
    assert (norm_type, kernel_size) == (4.0, 1) and bool(torch.isinf(powered[only_test]).all())
    assert torch.equal(fp64, torch.nn.functional.lp_pool1d(x.double(), norm_type, kernel_size))


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
