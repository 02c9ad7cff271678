"""`transfuzz fuzz model`: a planted NaN is found and localised; bad input exits 2 with one line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from agent.cli.app import app

runner = CliRunner()

MODEL_FILE = textwrap.dedent("""
    import torch
    from torch import nn

    class Planted(nn.Module):
        # log(6 - sum(x)): NaN only once the 16 inputs sum past 6, far from the seeds.
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(16, 1, bias=False)
            nn.init.ones_(self.proj.weight)
            self.head = nn.Linear(1, 3)

        def forward(self, x):
            return self.head(torch.log(6.0 - self.proj(x)))

    def make():
        torch.manual_seed(0)
        return Planted(), torch.zeros(2, 16)

    def bare():
        torch.manual_seed(0)
        return Planted()

    def changed():
        model, _ = make()
        with torch.no_grad():
            model.head.bias[0] += 50.0
        return model
""")


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "planted.py"
    path.write_text(MODEL_FILE)
    return path


def test_finds_and_localises_a_planted_nan(model_file: Path, tmp_path: Path) -> None:
    saved = tmp_path / "failing.pt"
    result = runner.invoke(app, ["--json", "fuzz", "model", f"{model_file}:make", "--budget", "3000x",
                                 "--coverage-layers", "proj", "--input-range=-1,1", "--batch", "20",
                                 "--threshold", "0.05", "--baseline", "--save-input", str(saved)])
    assert result.exit_code == 1, result.stderr  # a finding
    data = json.loads(result.stdout)
    assert data["found"] is True and data["objective"] == "nan"
    assert data["evidence"]["localisation"]["first_nonfinite_op"]["op"] == "aten.log.default"
    assert data["random_baseline"]["found"] is False
    failing = torch.load(saved)
    assert failing.shape == (1, 16) and float(failing.sum()) > 6.0 - 1e-4


def test_budget_exhausted_exits_0(model_file: Path) -> None:
    result = runner.invoke(app, ["--json", "fuzz", "model", f"{model_file}:make", "--budget", "200x",
                                 "--input-range=-0.1,0.1"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["found"] is False and data["stop_reason"] == "budget" and data["executions"] == 200


def test_version_regression_against_a_checkpoint(model_file: Path, tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("planted_for_ckpt", model_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ckpt = tmp_path / "v2.pt"
    torch.save(module.changed().state_dict(), ckpt)
    result = runner.invoke(app, ["--json", "fuzz", "model", f"{model_file}:make", "--against", str(ckpt),
                                 "--budget", "500x", "--input-range=-1,1"])
    assert result.exit_code == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["objective"] == "disagree:against"
    assert data["evidence"]["localisation"]["first_divergent_module"]["name"] == "head"


def test_model_without_example_uses_input_shape(model_file: Path) -> None:
    result = runner.invoke(app, ["--json", "fuzz", "model", f"{model_file}:bare", "--budget", "100x",
                                 "--input-shape", "2,16", "--input-range=-0.1,0.1"])
    assert result.exit_code == 0, result.stderr
    missing = runner.invoke(app, ["fuzz", "model", f"{model_file}:bare", "--budget", "100x"])
    assert missing.exit_code == 2 and "--input-shape" in missing.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["{file}"], "FILE.py:FACTORY"),
        (["{file}:nothing"], "no callable"),
        (["{file}:make", "--objective", "disagree:int4"], "objective"),
        (["{file}:make", "--budget", "soon"], "budget"),
        (["{file}:make", "--instrument", "everything"], "instrument"),
        (["{file}:make", "--coverage-layers", "fc9"], "fc9"),
        (["{file}:make", "--input-range", "1,-1"], "input-range"),
    ],
)
def test_usage_errors_exit_2_with_one_line(model_file: Path, args: list[str], needle: str) -> None:
    argv = ["fuzz", "model", *[a.format(file=model_file) for a in args]]
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert needle in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


MLP_FILE = textwrap.dedent("""
    import torch
    from torch import nn

    def make():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4)).eval(), torch.rand(4, 8) * 2 - 1
""")


def test_quantized_disagreement_is_found_and_localised(tmp_path: Path) -> None:
    path = tmp_path / "mlp.py"
    path.write_text(MLP_FILE)
    result = runner.invoke(app, ["--json", "fuzz", "model", f"{path}:make", "-o", "disagree:quantized",
                                 "--budget", "5000x", "--instrument", "op"])
    assert result.exit_code == 1, result.stderr
    data = json.loads(result.stdout)
    x = torch.tensor(data["failing_input"]).unsqueeze(0)
    import importlib.util

    spec = importlib.util.spec_from_file_location("mlp_check", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, _ = module.make()
    from torch.ao.quantization import quantize_dynamic

    quant = quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    with torch.no_grad():
        assert model(x).argmax(1) != quant(x).argmax(1)  # the finding reproduces outside TransFuzz
    # Quantized Linear layers keep their names, so the module localiser lines them up.
    assert data["evidence"]["localisation"]["first_divergent_module"]["name"] in {"0", "2"}
    assert data["evidence"]["op_coverage"] > 0


@pytest.mark.compile
def test_compile_objective_runs_and_reports_an_honest_negative(tmp_path: Path) -> None:
    path = tmp_path / "mlp.py"
    path.write_text(MLP_FILE)
    result = runner.invoke(app, ["--json", "fuzz", "model", f"{path}:make", "-o", "disagree:compile",
                                 "--backend", "aot_eager", "--compare", "close", "--budget", "300x"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["found"] is False and data["executions"] == 300
