"""The offline analyzer on the report categories of issue 15: gradients, devices, aliasing, trace constants."""

from __future__ import annotations

from agent.extract.analyzer import analyze_issue


def _py(code: str) -> str:
    return "```python\n" + code.strip() + "\n```\n"


def test_backward_named_in_the_title_is_not_the_api() -> None:
    body = _py("import torch\nx = torch.tensor([3.0, -3.0], requires_grad=True)\n"
               "torch.linalg.vector_norm(x, ord=2).backward()\nprint(x.grad)")
    analysis = analyze_issue("vector_norm backward gives a wrong gradient", body, [])
    assert analysis.pattern is not None
    assert analysis.pattern.api == "torch.linalg.vector_norm" and analysis.pattern.kind.value == "Gradient_Mismatch"


def test_a_constructor_sized_from_the_input_in_traced_code_is_the_api() -> None:
    body = _py("""
import torch

def f(x):
    return torch.zeros(x.size(0), 2) + 1

t = torch.jit.trace(f, torch.ones(4, 3))
print(f(torch.ones(2, 3)).shape, t(torch.ones(2, 3)).shape)
""") + "```\ntorch.Size([2, 2]) torch.Size([4, 2])\n```\n"
    analysis = analyze_issue("batch size is frozen by jit.trace", body, [])
    assert analysis.triage.is_silent_bug
    assert analysis.pattern is not None and analysis.pattern.api == "torch.zeros"
    assert analysis.pattern.test_mode.name == "jit.trace"


def test_an_mps_comparison_is_a_device_pattern() -> None:
    body = _py('import torch\nx = torch.ones(10, dtype=torch.int32)\n'
               'print(torch.cumsum(x, 0), torch.cumsum(x.to("mps"), 0).cpu())')
    analysis = analyze_issue("cumsum on MPS gives wrong results", body, [])
    assert analysis.pattern is not None and analysis.pattern.kind.value == "Device_Mismatch"


def test_an_inplace_write_through_an_expanded_view_is_a_variant_pattern() -> None:
    body = "Writes through the expanded view alias each other.\n" + _py(
        "import torch\nbase = torch.tensor([[5.0, -5.0]])\nx = base.expand(2, 2)\nx.clamp_(min=torch.tensor([[0.], [1.]]))\nprint(base)")
    analysis = analyze_issue("clamp_ on an expanded tensor gives wrong values", body, [])
    assert analysis.pattern is not None and analysis.pattern.test_mode.name == "variant:inplace"


def test_an_exception_title_stays_not_silent() -> None:
    body = _py("import torch\ntorch.compile(lambda x: x.sum())(torch.ones(2))") + "```\nRuntimeError: boom\n```\n"
    assert not analyze_issue("torch.compile raises for sum", body, []).triage.is_silent_bug
