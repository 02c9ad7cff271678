"""Generated repro scripts: plain torch, run in a fresh interpreter, exit 1 iff the bug reproduces."""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import tokenize
from pathlib import Path

import torch

from fuzz_core import HarnessSpec, run_harness
from fuzz_core.inputs import Sample
from fuzz_core.repro import save_inputs

# Wrong only for inputs with more than 10 elements, so a small input shows the repro's exit 0 path.
SIZE_DEPENDENT_BUG = '''
def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(4, 6, generator=g),), {}

def target(x):
    y = torch.tanh(x)
    if not x.is_contiguous() and x.numel() > 10:
        y = y * 1.01
    return y
'''


def _run(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=120,
                          cwd=script.parent)


def test_repro_reproduces_the_confirmed_verdict_and_not_more(tmp_path: Path) -> None:
    spec = HarnessSpec(api="planted.tanh", input_source="code", code=SIZE_DEPENDENT_BUG,
                       test_mode="layout:noncontiguous", kind="Layout_Mismatch")
    result = run_harness(spec, max_executions=10, workdir=tmp_path / "work")
    assert result.verdict == "confirmed", result.reason
    script = tmp_path / "repro.py"
    script.write_text(result.repro)
    assert "fuzz_core" not in result.repro
    found = _run(script)
    assert found.returncode == 1, found.stdout + found.stderr
    assert "MISMATCH" in found.stdout and "rmse vs float64" in found.stdout
    small = tmp_path / "small.safetensors"
    save_inputs(Sample(args=(torch.randn(2, 3),)), str(small))
    clean = _run(script, str(small))
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "does not reproduce" in clean.stdout


def test_repro_for_a_library_api_uses_its_qualified_name(tmp_path: Path) -> None:
    # A planted fault in how the test mode is reached is not possible for a real API, so check the
    # honest case: the repro of a suspicious/passed-free run is still runnable and exits 0.
    from fuzz_core.campaign import Campaign
    from fuzz_core.repro import render_repro

    campaign = Campaign(HarnessSpec(api="torch.nn.functional.relu6", test_mode="layout:noncontiguous"))
    campaign.prepare()
    inputs = tmp_path / "inputs.safetensors"
    save_inputs(campaign.seeds[0], str(inputs))
    source = render_repro(campaign.spec, campaign.target, campaign.reference, campaign.test, campaign.seeds[0],
                          str(inputs), random_op=False, summary="check")
    assert "return torch.nn.functional.relu6" in source
    script = tmp_path / "repro.py"
    script.write_text(source)
    assert _run(script).returncode == 0


INJECTED_REASON = ('beyond tolerance"""; import os; os.system("touch X") #\n'
                   'import os; os.system("touch X")\r\x1b]52;c;Y3VybCB4IHwgc2g=\x07 \u2028 \u202e """ \'\'\' \x00 end')


def _relu6_campaign():  # type: ignore[no-untyped-def]
    from fuzz_core.campaign import Campaign

    campaign = Campaign(HarnessSpec(api="torch.nn.functional.relu6", test_mode="layout:noncontiguous"))
    campaign.prepare()
    return campaign


def _render(campaign, inputs: Path, summary: str, **extra) -> str:  # type: ignore[no-untyped-def]
    from fuzz_core.repro import render_repro

    return render_repro(campaign.spec, campaign.target, campaign.reference, campaign.test, campaign.seeds[0],
                        str(inputs), random_op=False, summary=summary, **extra)


def _tokens(source: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(source).readline))


def test_finding_text_lands_only_in_comment_lines(tmp_path: Path) -> None:
    campaign = _relu6_campaign()
    inputs = tmp_path / "inputs.safetensors"
    save_inputs(campaign.seeds[0], str(inputs))
    source = _render(campaign, inputs, INJECTED_REASON)
    ast.parse(source)
    tokens = _tokens(source)
    assert any("os.system" in t.string for t in tokens if t.type == tokenize.COMMENT)
    assert not any("os.system" in t.string for t in tokens if t.type != tokenize.COMMENT)
    assert not any(ch in source for ch in "\x1b\x07\x00\r\u2028\u202e")
    script = tmp_path / "repro.py"
    script.write_text(source)
    ran = _run(script)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert not (tmp_path / "X").exists()


def test_repro_loads_inputs_without_unpickling(tmp_path: Path) -> None:
    campaign = _relu6_campaign()
    inputs = tmp_path / "inputs.safetensors"
    save_inputs(campaign.seeds[0], str(inputs))
    source = _render(campaign, inputs, "check")
    assert "weights_only=False" not in source and "pickle" not in source and "torch.load" not in source
    script = tmp_path / "repro.py"
    script.write_text(source)

    class Payload:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            return (os.system, (f"touch {tmp_path / 'PWNED'}",))

    crafted = tmp_path / "crafted.pt"
    torch.save({"args": (Payload(),), "kwargs": {}}, crafted)
    ran = _run(script, str(crafted))
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "cannot load the inputs" in ran.stderr
    assert not (tmp_path / "PWNED").exists()


def test_harness_code_is_referenced_by_file_never_pasted(tmp_path: Path) -> None:
    import pytest

    from fuzz_core.campaign import Campaign
    from fuzz_core.repro import HARNESS_FILE_MARKER

    code = ("def make_inputs(seed):\n    return (torch.randn(3, 4),), {}\n\n"
            "def target(x):\n    return torch.tanh(x)  # UNIQUE-HARNESS-LINE\n")
    campaign = Campaign(HarnessSpec(api="torch.tanh", input_source="code", code=code,
                                    test_mode="layout:noncontiguous"))
    campaign.prepare()
    inputs = tmp_path / "inputs.safetensors"
    save_inputs(campaign.seeds[0], str(inputs))
    with pytest.raises(ValueError, match="harness code"):
        _render(campaign, inputs, "check")
    harness = tmp_path / "harness.py"
    harness.write_text(code)
    source = _render(campaign, inputs, "check", harness_path=str(harness))
    assert "UNIQUE-HARNESS-LINE" not in source
    assert f"{HARNESS_FILE_MARKER}{str(harness)!r}" in source and "NOT in this script" in source
    script = tmp_path / "repro.py"
    script.write_text(source)
    ran = _run(script)
    assert ran.returncode == 0, ran.stdout + ran.stderr


WRONG_GRADIENT = '''
class _Doubled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * grad * torch.cos(x)  # deliberately twice the derivative

def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(3, 4, generator=g),), {}

def target(x):
    return _Doubled.apply(x)
'''


def test_a_gradient_findings_repro_takes_gradients_although_the_script_runs_modes_under_no_grad(
        tmp_path: Path) -> None:
    spec = HarnessSpec(api="planted.sin", input_source="code", code=WRONG_GRADIENT, reference_mode="grad:numeric",
                       test_mode="grad", kind="Gradient_Mismatch")
    result = run_harness(spec, max_executions=10, workdir=tmp_path / "work")
    assert result.verdict == "confirmed", result.reason
    script = tmp_path / "repro.py"
    script.write_text(result.repro)
    found = _run(script)
    assert found.returncode == 1, found.stdout + found.stderr
    # the mismatch is the gradients' values, not the test mode failing to take gradients at all
    assert "MISMATCH" in found.stdout and "raises" not in found.stdout, found.stdout
    assert "does not require grad" not in found.stdout + found.stderr
