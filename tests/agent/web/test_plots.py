"""Error plots from real saved outputs and from stored evidence numbers."""

from __future__ import annotations

import math
from pathlib import Path

import torch

from safetensors.torch import save_file

from agent.web.plots import element_errors, error_svg, summary_errors, verdict_timeline_svg
from fuzz_core.saved_outputs import save_outputs


def test_element_errors_from_saved_outputs_mark_nonfinite_positions(tmp_path: Path) -> None:
    fp64 = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    reference = fp64.float() + 1e-7
    test = torch.tensor([1.0, 2.5, float("nan"), 4.0])
    path = tmp_path / "outputs.safetensors"
    assert save_outputs({"reference": reference, "test": test, "fp64": fp64}, path, "") is None
    errors = element_errors({"outputs_path": str(path)})
    assert errors is not None
    assert errors.total == 4 and errors.stride == 1
    assert errors.test[1] == 0.5 and math.isnan(errors.test[2])
    assert errors.nonfinite == [2]
    svg = error_svg({"outputs_path": str(path)})
    assert svg is not None and b"<svg" in svg


def test_outputs_that_are_not_three_tensors_fall_back_to_the_summary(tmp_path: Path) -> None:
    path = tmp_path / "outputs.safetensors"
    save_file({"reference": torch.ones(2)}, str(path))  # a safetensors file, but not one of saved outputs
    evidence = {"outputs_path": str(path), "max_abs_diff": "inf", "ref_error_vs_fp64": 0.0, "test_error_vs_fp64": 2.0}
    assert element_errors(evidence) is None
    summary = summary_errors(evidence)
    assert summary is not None and math.isinf(summary.max_abs_diff)  # fuzz_core stores inf as "inf"
    assert b"<svg" in (error_svg(evidence) or b"")


def test_a_pickle_is_never_loaded(tmp_path: Path) -> None:
    path = tmp_path / "outputs.safetensors"
    torch.save({"reference": torch.ones(2), "test": torch.ones(2), "fp64": torch.ones(2, dtype=torch.float64)}, path)
    assert element_errors({"outputs_path": str(path)}) is None


def test_no_numbers_no_plot() -> None:
    assert error_svg({"torch_version": "2.13.0"}) is None


def test_plot_text_is_drawn_as_paths_not_svg_text() -> None:
    svg = error_svg({"max_abs_diff": 1.0, "tolerance": {"rtol": 1e-5, "atol": 1e-5}})
    assert svg is not None and b"<text" not in svg


def test_verdict_timeline_draws_with_and_without_points() -> None:
    from datetime import UTC, datetime, timedelta

    start = datetime(2025, 1, 1, tzinfo=UTC)
    points = [(start + timedelta(seconds=i), "confirmed" if i % 2 else "passed") for i in range(6)]
    assert b"<svg" in verdict_timeline_svg(points)
    assert b"<svg" in verdict_timeline_svg([])
