"""torch.autograd.Function as an API under test: the fuzz core's own Functions (Note [Custom autograd Functions])."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from fuzz_core import HarnessSpec, run_harness
from fuzz_core.api_names import rejection_reason
from fuzz_core.campaign import Campaign
from fuzz_core.custom_functions import CUSTOM_FUNCTION_API, FUNCTIONS, custom_function_callable
from fuzz_core.target import build_target


def _grad(function: str, x: torch.Tensor) -> torch.Tensor:
    x = x.detach().requires_grad_(True)
    (grad,) = torch.autograd.grad(custom_function_callable()(x, function=function).sum(), x)
    return grad


def test_each_function_runs_its_authors_backward_rule() -> None:
    x = torch.tensor([0.3, -1.2, 2.6])
    assert torch.equal(_grad("straight_through", x), torch.ones(3))  # autodiff of round() would be zeros
    assert torch.allclose(_grad("surrogate_backward", x), 0.5 * torch.cos(x))
    assert torch.allclose(_grad("tied_inputs", x), 2 * x + 2)  # both inputs' gradients, summed
    assert torch.allclose(_grad("saved_output", x), torch.exp(x))


def test_the_construct_names_the_fuzz_cores_functions_not_torchs_class() -> None:
    assert rejection_reason(CUSTOM_FUNCTION_API) is None
    target = build_target(CUSTOM_FUNCTION_API)
    assert target.fn is custom_function_callable() and target.fn is not torch.autograd.Function
    assert rejection_reason("torch.autograd.function.FunctionCtx") is not None


def test_a_function_name_that_is_not_one_of_ours_is_refused() -> None:
    with pytest.raises(ValueError, match="no custom Function named"):
        custom_function_callable()(torch.ones(2), function="__import__('os').system('true')")


def _seeds(trigger: dict) -> list:  # type: ignore[type-arg]
    campaign = Campaign(HarnessSpec(api=CUSTOM_FUNCTION_API, input_source="signature", reference_mode="grad",
                                    test_mode="grad:compile:aot_eager", trigger=trigger))
    campaign.prepare()
    return campaign.seeds


def test_seed_inputs_cover_every_function() -> None:
    assert {s.kwargs["function"] for s in _seeds({})} == set(FUNCTIONS)


def test_a_pattern_that_names_one_function_keeps_to_it() -> None:
    seeds = _seeds({"params": {"function": "tied_inputs"}})
    assert seeds and {s.kwargs["function"] for s in seeds} == {"tied_inputs"}


def test_eager_gradients_are_not_held_against_central_differences(tmp_path: Path) -> None:
    spec = HarnessSpec(api=CUSTOM_FUNCTION_API, input_source="signature", reference_mode="grad:numeric",
                       test_mode="grad", kind="Gradient_Mismatch")
    result = run_harness(spec, max_executions=20, workdir=tmp_path)
    assert result.verdict == "not_applicable", result.reason
    assert "author's rule" in result.reason


@pytest.mark.compile
def test_compiled_gradients_follow_every_function_and_the_repro_defines_them(tmp_path: Path) -> None:
    spec = HarnessSpec(api=CUSTOM_FUNCTION_API, input_source="signature", reference_mode="grad",
                       test_mode="grad:compile:aot_eager", kind="Gradient_Mismatch", seed=4)
    result = run_harness(spec, max_executions=80, workdir=tmp_path / "work")
    assert result.verdict == "passed", result.reason
    assert result.evidence["compared"] >= 40

    from fuzz_core.repro import render_repro, save_inputs

    campaign = Campaign(spec)
    campaign.prepare()
    tied = next(s for s in campaign.seeds if s.kwargs["function"] == "tied_inputs")
    inputs = tmp_path / "inputs.safetensors"
    save_inputs(tied, str(inputs))
    source = render_repro(spec, campaign.target, campaign.reference, campaign.test, tied, str(inputs),
                          random_op=False, summary="check")
    assert "class Bilinear(torch.autograd.Function)" in source and "fuzz_core" not in source
    script = tmp_path / "repro.py"
    script.write_text(source)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "does not reproduce" in run.stdout


def test_a_pattern_may_name_only_one_of_the_functions() -> None:
    from fuzz_core.trigger_params import check_params

    assert check_params({"function": "tied_inputs"}, api=CUSTOM_FUNCTION_API).kept == {"function": "tied_inputs"}
    refused = check_params({"function": "os_system"}, api=CUSTOM_FUNCTION_API)
    assert refused.kept == {} and "not one of" in refused.dropped["function"]
