"""Model fuzzing: factories and checkpoints load with clear errors; modes disagree where expected."""

from __future__ import annotations

import copy
import textwrap
from pathlib import Path

import pytest
import torch
from torch import nn

from fuzz_core.cgf import CgfConfig, InputDomain
from fuzz_core.cgf.model import (
    ModelFuzzConfig,
    ModelLoadError,
    build_second_mode,
    call_factory,
    fuzz_model,
    load_checkpoint,
    load_factory,
)


def _mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).eval()


def test_factory_loading_and_its_errors(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent("""
        import torch
        from torch import nn
        def make():
            return nn.Linear(3, 2), torch.zeros(4, 3)
        def bad():
            return 42
        VALUE = 1
    """))
    loaded = call_factory(load_factory(f"{path}:make"))
    assert isinstance(loaded.model, nn.Linear) and loaded.example.shape == (4, 3)
    with pytest.raises(ModelLoadError, match="FILE.py:FACTORY"):
        load_factory(str(path))
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_factory(f"{tmp_path / 'nope.py'}:make")
    with pytest.raises(ModelLoadError, match="no callable"):
        load_factory(f"{path}:VALUE")
    with pytest.raises(ModelLoadError, match="expected nn.Module"):
        call_factory(load_factory(f"{path}:bad"))
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(ModelLoadError, match="boom"):
        load_factory(f"{broken}:make")


def test_checkpoint_loading(tmp_path: Path) -> None:
    model = _mlp()
    other = copy.deepcopy(model)
    with torch.no_grad():
        other[2].bias.add_(1.0)
    ckpt = tmp_path / "v2.pt"
    torch.save(other.state_dict(), ckpt)
    loaded = load_checkpoint(model, ckpt)
    assert torch.equal(loaded[2].bias, other[2].bias)
    assert not torch.equal(model[2].bias, other[2].bias)  # the template is untouched
    torch.save(nn.Linear(2, 2).state_dict(), tmp_path / "wrong.pt")
    with pytest.raises(ModelLoadError, match="does not fit"):
        load_checkpoint(model, tmp_path / "wrong.pt")


def test_quantized_mode_replaces_linear_layers() -> None:
    second = build_second_mode(_mlp(), "disagree:quantized")
    assert second is not None
    assert type(second.model[0]).__module__.startswith("torch.ao.nn.quantized.dynamic")
    assert type(second.model[1]) is nn.ReLU
    out = second.fn(torch.randn(2, 8))
    assert out.shape == (2, 4) and out.dtype == torch.float32


def test_version_regression_finds_and_localises_the_changed_layer() -> None:
    old = _mlp()
    new = copy.deepcopy(old)
    with torch.no_grad():
        new[2].weight[1].mul_(1.5)  # the regression: class 1 is over-weighted
    config = ModelFuzzConfig(
        objective="disagree:against", compare="argmax",
        cgf=CgfConfig(max_mutations=2000, mutations_per_item=50, threshold=0.5,
                      domain=InputDomain(-1.0, 1.0), seed=0),
    )
    seeds = torch.zeros(2, 8)
    report = fuzz_model(old, seeds, config, against=new)
    assert report.result.found
    x = report.result.failing_input.unsqueeze(0)
    with torch.no_grad():
        assert old(x).argmax(1) != new(x).argmax(1)
    loc = report.evidence["localisation"]
    assert loc["first_divergent_module"]["name"] == "2"


def test_float16_mode_localises_to_a_module_and_an_op() -> None:
    config = ModelFuzzConfig(objective="disagree:float16", compare="close", instrument="module",
                             cgf=CgfConfig(max_mutations=200, mutations_per_item=20, seed=0,
                                           domain=InputDomain(-1.0, 1.0)))
    report = fuzz_model(_mlp(), torch.rand(1, 8), config)
    assert report.result.found  # fp16 is never within float16 tolerance of fp32 for a whole MLP
    loc = report.evidence["localisation"]
    assert loc["first_divergent_module"]["name"] == "0"
    assert loc["first_divergent_op"]["name"] == "aten.addmm.default"
    assert report.evidence["instrumentation"]["level"] == "module"
    assert report.evidence["instrumentation"]["module_count"] == 4


def test_unknown_objective_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown objective"):
        build_second_mode(_mlp(), "disagree:int4")
