"""`transfuzz fuzz api`: one JSON object on a real run; usage errors exit 2 with near matches."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.cli.app import app

runner = CliRunner()
JSON_KEYS = {"api", "pattern", "modes", "dtype", "verdict", "executions", "max_abs_diff", "max_rel_diff", "reason",
             "repro", "inputs_path", "elapsed_s"}


def test_json_run_prints_one_object_with_the_contract_keys(tmp_path) -> None:
    result = runner.invoke(app, ["--json", "fuzz", "api", "torch.nn.functional.relu6", "--pattern", "layout_mismatch",
                                 "--budget", "60x", "--seed", "2", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert JSON_KEYS <= set(data)
    assert data["pattern"] == "Layout_Mismatch" and data["modes"] == ["eager", "layout:noncontiguous"]
    assert data["verdict"] == "passed" and data["executions"] == 60
    assert data["repro"] is None and data["max_abs_diff"] is None


@pytest.mark.parametrize("args,expected", [
    (["torch.nn.functional.relu7", "--pattern", "JIT_Eager_Mismatch"], "torch.nn.functional.relu6"),
    (["torch.os.system", "--pattern", "JIT_Eager_Mismatch"], "rejected: re-exported module os"),
    (["torch.hub.load", "--pattern", "JIT_Eager_Mismatch"], "denied: loads, compiles or parses code"),
    (["torch.add", "--pattern", "Compile_Eagr_Mismatch"], "Compile_Eager_Mismatch"),
    (["torch.add", "--pattern", "JIT_Eager_Mismatch", "--budget", "soon"], "2000x"),
    (["torch.add", "--pattern", "Precision_Mismatch", "--dtype", "int8"], "float16"),
    (["torch.add", "--pattern", "JIT_Eager_Mismatch", "--backend", "inductor"], "compile and gradient patterns"),
])
def test_usage_errors_exit_2_with_a_hint(args: list[str], expected: str) -> None:
    result = runner.invoke(app, ["fuzz", "api", *args])
    assert result.exit_code == 2
    assert expected in " ".join(result.stderr.split())


@pytest.mark.compile
def test_a_gradient_pattern_with_a_backend_compares_gradients_through_compiled_code(tmp_path) -> None:
    result = runner.invoke(app, ["--json", "fuzz", "api", "torch.autograd.Function", "--pattern", "Gradient_Mismatch",
                                 "--backend", "aot_eager", "--budget", "60x", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["modes"] == ["grad", "grad:compile:aot_eager"]
    assert data["verdict"] == "passed" and data["executions"] == 60


def test_values_only_builds_a_value_mutation_spec_and_runs() -> None:
    from agent.cli.fuzz_api import _build_spec

    assert _build_spec("torch.add", "JIT_Eager_Mismatch", None, None, 0, "values").mutate == "values"
    assert _build_spec("torch.add", "JIT_Eager_Mismatch", None, None, 0).mutate == "all"
    result = runner.invoke(app, ["--json", "fuzz", "api", "torch.sigmoid", "--pattern", "JIT_Eager_Mismatch",
                                 "--values-only", "--budget", "60x"])
    assert result.exit_code == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["verdict"] == "passed" and data["executions"] == 60


def test_a_pass_needs_min_inputs_compared_inputs_as_in_a_campaign() -> None:
    args = ["--json", "fuzz", "api", "torch.nn.functional.relu6", "--pattern", "JIT_Eager_Mismatch", "--budget", "20x"]
    short = runner.invoke(app, args)
    assert short.exit_code == 0, short.stdout + short.stderr
    data = json.loads(short.stdout)
    assert data["verdict"] == "inconclusive" and data["executions"] == 20
    assert "a pass needs 50" in data["reason"]
    enough = runner.invoke(app, [*args, "--min-inputs", "10"])
    assert enough.exit_code == 0, enough.stdout + enough.stderr
    assert json.loads(enough.stdout)["verdict"] == "passed"
