"""Op-level coverage triples, activation features and output summaries."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fuzz_core.coverage import ActivationCapture, OpCoverage, resolve_layers, summary_features


def test_op_coverage_records_op_dtype_layout_triples() -> None:
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    cov = OpCoverage()
    with torch.no_grad(), cov:
        model(torch.randn(2, 4))
    assert ("aten.addmm.default", "float32", "strided") in cov.seen
    assert ("aten.relu.default", "float32", "strided") in cov.seen
    before = set(cov.seen)
    with torch.no_grad(), cov:
        model.double()(torch.randn(2, 4, dtype=torch.float64))
    new = cov.new_in_last(before)
    assert ("aten.addmm.default", "float64", "strided") in new
    assert all(key[1] == "float64" for key in new if key[0] != "aten.t.default")
    with cov:
        torch.randn(3, 3).to_sparse().coalesce()
    assert any(layout == "sparse_coo" for _, _, layout in cov.seen)


def test_activation_capture_concatenates_chosen_layers() -> None:
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))
    with torch.no_grad(), ActivationCapture(model, ["0", "2"]) as cap:
        out = model(torch.randn(3, 4))
        feats = cap.features(out, 3)
    assert feats.shape == (3, 7)
    with torch.no_grad(), ActivationCapture(model) as cap:
        out = model(torch.randn(3, 4))
        assert cap.features(out, 3).shape == (3, 2)  # default: the output itself


def test_unknown_layer_names_list_what_exists() -> None:
    model = nn.Sequential(nn.Linear(4, 5))
    try:
        resolve_layers(model, ["fc9"])
    except ValueError as exc:
        assert "fc9" in str(exc) and "0" in str(exc)
    else:
        raise AssertionError("an unknown layer must be an error")


def test_summary_features_have_a_fixed_length_per_tensor() -> None:
    a = summary_features(torch.randn(5, 5))
    b = summary_features(torch.tensor([float("nan"), 1.0, 0.0]))
    assert a.shape == b.shape == (7,)
    assert b[5] == 2 / 3  # fraction finite
    assert summary_features((torch.ones(2), torch.zeros(3, dtype=torch.int64))).shape == (14,)


def _torch_summary(t: torch.Tensor) -> list[float]:
    """The statistics summary_features promises, computed with torch in float64."""
    x = t.detach().to(torch.float64).reshape(-1)
    finite = x[torch.isfinite(x)]
    if finite.numel() == 0:
        return [0.0] * 6 + [float((x == 0).double().mean())]
    return [finite.mean().item(), finite.std().item() if finite.numel() > 1 else 0.0, finite.min().item(),
            finite.max().item(), finite.abs().mean().item(), finite.numel() / x.numel(),
            float((x == 0).double().mean())]


@pytest.mark.parametrize("tensor", [
    torch.randn(8, 8) * 100 + 7, torch.randn(5, 3).t(), torch.tensor([float("nan"), 1.0, float("-inf"), 0.0, 4.0]),
    torch.tensor([1e200, -1e200, 5.0], dtype=torch.float64), torch.tensor([3, 0, -2]), torch.tensor([True, False]),
    torch.randn(4, 4).to(torch.bfloat16), torch.randn(6).half(), torch.tensor([float("nan")] * 3), torch.tensor([2.5]),
], ids=["float32", "transposed", "nonfinite", "huge", "int64", "bool", "bfloat16", "float16", "all_nan", "single"])
def test_summary_features_are_the_statistics_torch_gives_without_warnings(tensor: torch.Tensor) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = summary_features(tensor).tolist()
    assert got == pytest.approx(_torch_summary(tensor), rel=1e-12, abs=1e-300, nan_ok=True)
