"""Saved failing inputs: safetensors + JSON, loaded back exactly (layout, dtype, literals), never unpickled."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.layout import noncontiguous_copy
from fuzz_core.saved_inputs import UnsavableInput, load_inputs, save_inputs


def _round_trip(tmp_path: Path, sample: Sample) -> dict:
    path = tmp_path / "inputs.safetensors"
    save_inputs(sample, str(path))
    return load_inputs(str(path))


def test_strided_tensor_keeps_its_layout_and_the_bytes_between(tmp_path: Path) -> None:
    strided = noncontiguous_copy(torch.randn(3, 5))
    loaded = _round_trip(tmp_path, Sample(args=(strided,)))["args"][0]
    assert loaded.stride() == strided.stride() and not loaded.is_contiguous()
    assert torch.equal(loaded, strided)
    # The gaps a strided view skips hold what they held (an op that reads them by mistake shows it).
    span = 1 + sum((n - 1) * s for n, s in zip(strided.shape, strided.stride()))
    flat = strided.as_strided((span,), (1,), strided.storage_offset())
    assert torch.equal(loaded.as_strided((span,), (1,), loaded.storage_offset()), flat)
    assert (flat == 7).any()


def test_channels_last_complex128_and_scalars_round_trip(tmp_path: Path) -> None:
    channels_last = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    complex128 = torch.randn(4, dtype=torch.complex128)
    half = torch.tensor([1.5, float("nan")], dtype=torch.float16)
    kwargs = {"dim": (0, -1), "dtype": torch.float64, "eps": float("-inf"), "scale": complex(1, float("nan")),
              "size": torch.Size([2, 2]), "memory_format": torch.channels_last, "names": ["a", None, True],
              "index": slice(None, 3, 2)}
    loaded = _round_trip(tmp_path, Sample(args=(channels_last, complex128, half), kwargs=kwargs, ctor={"k": 3}))
    a, b, c = loaded["args"]
    assert a.stride() == channels_last.stride() and torch.equal(a, channels_last)
    assert b.dtype == torch.complex128 and torch.equal(b, complex128)
    assert c.dtype == torch.float16 and torch.allclose(c, half, equal_nan=True)
    out = loaded["kwargs"]
    assert out["dim"] == (0, -1) and out["dtype"] is torch.float64 and out["eps"] == -math.inf
    assert out["scale"].real == 1 and math.isnan(out["scale"].imag)
    assert out["size"] == torch.Size([2, 2]) and out["memory_format"] is torch.channels_last
    assert out["names"] == ["a", None, True] and out["index"] == slice(None, 3, 2)
    assert loaded["ctor"] == {"k": 3}


def test_the_same_tensor_twice_is_saved_once_and_shares_memory(tmp_path: Path) -> None:
    t = torch.randn(4, 4)
    path = tmp_path / "inputs.safetensors"
    save_inputs(Sample(args=(t, t)), str(path))
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as handle:
        assert len(list(handle.keys())) == 1
    first, second = load_inputs(str(path))["args"]
    assert first.data_ptr() == second.data_ptr()


def test_a_value_that_is_no_literal_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UnsavableInput, match="function"):
        save_inputs(Sample(args=(torch.randn(2), lambda x: x)), str(tmp_path / "inputs.safetensors"))


def test_a_pickle_is_not_an_inputs_file(tmp_path: Path) -> None:
    path = tmp_path / "inputs.pt"
    torch.save({"args": (torch.randn(2),), "kwargs": {}}, path)
    with pytest.raises(Exception) as raised:
        load_inputs(str(path))
    assert not isinstance(raised.value, (KeyError, AttributeError))
