"""One comparison (Note [One comparison] in fuzz_core/oracles/closeness.py): the oracle and both repro scripts
decide alike, because the scripts run the oracle's own close_enough, pasted in as source."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from fuzz_core.campaign import build_target_for
from fuzz_core.execution import execute_fp64
from fuzz_core.inputs import Sample
from fuzz_core.modes import get_mode
from fuzz_core.oracles import compare_outputs, judge_leaf
from fuzz_core.oracles.closeness import close_enough, rounding_slack
from fuzz_core.oracles.compare import compare_tensors
from fuzz_core.oracles.tolerance import LOW_PRECISION_ULPS, tolerance_for
from fuzz_core.repro import render_repro, save_inputs
from fuzz_core.short_repro import render_short_repro
from fuzz_core.spec import HarnessSpec

SPEC = HarnessSpec(api="torch.add", test_mode="dtype:float16", oracle="value", kind="Precision_Mismatch")
HALF_ULP_AT_HALF = 2.0 ** -11  # float16's spacing in [0.5, 1)


def _script_functions(script: str) -> dict:
    """The comparison functions exactly as a rendered script defines them."""
    tree = ast.parse(script)
    wanted = [node for node in tree.body if isinstance(node, ast.FunctionDef)
              and node.name in ("close_enough", "rounding_slack", "tolerance_for")]
    namespace: dict = {"torch": torch, "DTYPE_PRECISIONS": {}}
    exec(compile(ast.Module(body=wanted, type_ignores=[]), "script", "exec"), namespace)  # noqa: S102 - our template
    return namespace


def _sample(steps: int) -> Sample:
    """8 + steps * 2^-11 plus -7.5: float16 rounds the first input to 8, float32 keeps it, so the float16
    sum is `steps` float16 ulps (of 0.5) away from the float32 sum rounded to float16."""
    return Sample((torch.tensor([8.0 + steps * HALF_ULP_AT_HALF]), torch.tensor([-7.5])))


def _run(text: str, path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    path.write_text(text)
    return subprocess.run([sys.executable, "-I", str(path), *args], capture_output=True, text=True, timeout=300,
                          cwd=path.parent)


def test_the_oracle_and_the_pasted_routine_agree_at_the_tolerance_edge() -> None:
    ulp = torch.finfo(torch.float32).eps
    ref = torch.ones(40)
    test = 1.0 + torch.arange(80, 120, dtype=torch.float64) * ulp  # across atol + rtol * 1 (about 95 ulps)
    test = test.float()
    specials_ref = torch.tensor([float("inf"), float("inf"), float("nan"), 1.0, float("-inf")])
    specials_test = torch.tensor([float("inf"), 3.0, float("nan"), float("nan"), float("inf")])
    ref, test = torch.cat([ref, specials_ref]), torch.cat([test, specials_test])
    rtol, atol = tolerance_for(torch.float32)
    pasted = _script_functions(render_short_repro(
        HarnessSpec(api="torch.add", test_mode="compile:inductor", oracle="value"),
        build_target_for(SPEC), Sample((torch.ones(1), torch.ones(1))), "value:out"))["close_enough"]
    ours = close_enough(ref, test, rtol, atol)
    assert torch.equal(pasted(ref, test, rtol, atol), ours)
    assert 0 < int(ours[:40].sum()) < 40  # the edge runs through the vector
    assert ours[-5:].tolist() == [True, False, True, False, False]  # equal inf, inf vs finite, NaN == NaN, ...
    mismatch = compare_tensors(ref, test, "out", low_dtype=None, compares_dtype=True)
    assert mismatch is not None and mismatch.mismatch_count == int((~ours).sum())
    assert mismatch.first_index == [int(torch.nonzero(~ours)[0])]


@pytest.mark.parametrize("steps", [3, 4, 5])  # inside the 4-ulp rounding allowance, on its edge, just beyond
def test_float16_boundary_case_oracle_and_both_repros_agree(steps: int, tmp_path: Path) -> None:
    target = build_target_for(SPEC)
    reference, test = get_mode("eager"), get_mode(SPEC.test_mode)
    sample = _sample(steps)
    ref_out, test_out = reference.run(target, sample), test.run(target, sample)
    rtol, atol = tolerance_for(torch.float16)
    low_ref = ref_out.to(torch.float16)
    assert not torch.allclose(test_out.double(), low_ref.double(), rtol=rtol, atol=atol)  # beyond rtol/atol
    oracle = compare_outputs(ref_out, test_out, low_dtype=test.compute_dtype, compares_dtype=test.compares_dtype)
    assert oracle.ok == (steps <= LOW_PRECISION_ULPS)  # the rounding allowance decides
    slack = rounding_slack(low_ref, test_out, LOW_PRECISION_ULPS)
    assert bool(close_enough(low_ref, test_out, rtol, atol, slack).all()) == oracle.ok

    # The short repro: the oracle's close_enough decides; a difference that it accepts never exits 1.
    short = render_short_repro(SPEC, target, sample, "value:out")
    done = _run(short, tmp_path / "short.py")
    assert f"{oracle.ok}; error vs float64" in done.stdout, done.stdout + done.stderr
    assert done.returncode == (0 if oracle.ok else 1), done.stdout + done.stderr

    # The long repro: the same comparison, then the float64 rule as the oracle judges it.
    inputs = tmp_path / "inputs.safetensors"
    save_inputs(sample, str(inputs))
    long = render_repro(SPEC, target, reference, test, sample, str(inputs), random_op=False, summary="boundary")
    done = _run(long, tmp_path / "repro.py")
    if oracle.ok:
        assert "no mismatch" in done.stdout and done.returncode == 0, done.stdout + done.stderr
        return
    fp64 = execute_fp64(target, sample, reseed=None).output
    judged = judge_leaf(ref_out, test_out, fp64, low_dtype=test.compute_dtype, rtol=oracle.first.rtol,
                        atol=oracle.first.atol)
    assert "elements differ beyond" in done.stdout, done.stdout + done.stderr
    assert done.returncode == (1 if judged.test_worse else 0), done.stdout + done.stderr


def test_rendered_repros_carry_the_oracles_own_source() -> None:
    import inspect

    from fuzz_core.oracles import tolerance

    sample = _sample(5)
    target = build_target_for(SPEC)
    short = render_short_repro(SPEC, target, sample, "value:out")
    long = render_repro(SPEC, target, get_mode("eager"), get_mode(SPEC.test_mode), sample, "x.safetensors",
                        random_op=False, summary="s")
    for function in (close_enough, rounding_slack):
        source = inspect.getsource(function).rstrip("\n")
        assert source in short and source in long
        assert "fuzz_core" not in source and "transfuzz" not in source.lower()  # a repro never reads as needing us
    assert inspect.getsource(tolerance.tolerance_for).rstrip("\n") in long
