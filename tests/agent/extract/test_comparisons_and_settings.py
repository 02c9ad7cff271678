"""Note [Comparisons as operators] (scan.py), process-wide settings and printed result types as tooling
(vocab.INFRA_PREFIXES), and which ops can have ties (vocab.TIE_SENSITIVE).

Reports written for these tests, in shapes real ones take: a one-line comparison on an accelerator, a traced
function run under a process-wide default tensor type, a session whose pasted output shows a structured result.
"""

from __future__ import annotations

import ast

from agent.extract.analyzer import analyze_issue
from agent.extract.scan import scan_tree
from agent.extract.select import is_tooling

SILENT = ["module: correctness (silent)"]


def _issue(code: str, prose: str = "The values are wrong.") -> str:
    return f"### 🐛 Describe the bug\n\n{prose}\n\n```python\n{code}\n```\n"


def _operators(code: str) -> list[str]:
    return [c.api for c in scan_tree(ast.parse(code)).operators]


def test_a_comparison_of_tensors_is_the_op_when_the_repro_does_nothing_else() -> None:
    code = "import torch\nv = torch.tensor([5, 6, 7, 8], device='mps')\nprint(v[2:] < v[:2])\n"
    a = analyze_issue("comparing tensors on the mps device gives wrong answers", _issue(code), SILENT)
    assert a.pattern is not None
    assert (a.pattern.api, a.pattern.kind.value) == ("torch.lt", "Device_Mismatch")


def test_a_comparison_an_assert_or_if_makes_is_a_check() -> None:
    code = ("import torch\na = torch.ones(3)\nb = a.sin()\nassert a >= b\n"
            "if a != b:\n    pass\nwhile a < b:\n    break\n")
    assert _operators(code) == []


def test_a_comparison_reduced_to_a_verdict_is_a_check() -> None:
    code = ("import torch\na = torch.ones(3)\nb = a.cos()\nprint((a == b).all())\n"
            "print((a - b).abs().max() > 1e-4)\nprint(a.norm() <= b.norm())\n")
    assert _operators(code) == ["torch.sub"]


def test_a_comparison_of_plain_numbers_is_not_read() -> None:
    assert _operators("n = 3\nprint(n > 2, 4 <= 5)\n") == []


def test_a_process_wide_setting_is_not_the_api_under_test() -> None:
    code = (
        "import torch\n\ndef f(w):\n    return (torch.ones(2) * w ** 3 - w).sum()\n\n"
        "torch.set_default_tensor_type(torch.DoubleTensor)\ntf = torch.jit.trace(f, torch.tensor(2.))\n"
        "w = torch.tensor(2., requires_grad=True)\n"
        "print(torch.autograd.grad(tf(w), (w,))[0], torch.autograd.grad(f(w), (w,))[0])\n"
    )
    a = analyze_issue("traced function gets the wrong gradient", _issue(code), SILENT)
    assert a.pattern is not None
    assert a.pattern.api != "torch.set_default_tensor_type"
    assert a.pattern.api in ("torch.mul", "torch.pow", "torch.sub", "torch.sum")


def test_a_printed_result_type_and_a_setting_are_tooling() -> None:
    # pasted output such as ``torch.return_types.cummin(values=..., indices=...)`` parses as a call
    assert is_tooling("torch.return_types.cummin")
    assert is_tooling("torch.set_flush_denormal")
    assert not is_tooling("torch.cummin")


def test_unique_on_repeated_values_has_no_tie_to_blame() -> None:
    code = ("import torch\nx = torch.tensor([[1, 0, 1], [1, 0, 1], [0, 1, 1]])\n"
            "print(torch.unique(x, dim=1), torch.unique(x.cuda(), dim=1))\n")
    a = analyze_issue("unique with dim gives columns out of order on CUDA", _issue(code), SILENT)
    assert a.triage.false_alarm_class is None
    assert a.pattern is not None and a.pattern.api == "torch.unique"


def test_an_op_the_title_spells_out_beats_a_bare_title_word_the_code_never_calls() -> None:
    code = ("import torch\nfor n in (2**21 + 1, 2**22):\n    a = torch.ones(n, 2).cuda()\n"
            "    print((torch.mm(a, torch.ones(2, 2).cuda()) - 2).abs().max().item())\n")
    a = analyze_issue("`torch.mm` gives wrong results for tall matrices, unlike matmul", _issue(code), SILENT)
    assert a.pattern is not None
    assert a.pattern.api == "torch.mm"


def test_a_compiler_the_title_names_beats_the_half_precision_of_the_inputs() -> None:
    code = ("import torch\nw = torch.rand(4, 6, dtype=torch.float16)\n\ndef f(x):\n"
            "    return torch.floor(x / w.abs()).mean(1)\n\nx = torch.rand(4, 6, dtype=torch.float16)\nprint(f(x))\n")
    a = analyze_issue("[inductor] mean of a floored quotient changes", _issue(code), SILENT)
    assert a.pattern is not None
    assert (a.pattern.kind.value, a.pattern.test_mode.name) == ("Compile_Eager_Mismatch", "compile:inductor")


def test_a_name_bound_to_an_op_calls_that_op() -> None:
    code = ("import torch\nt = torch.rand(300, 70)\nreduce = torch.amax\nwant = reduce(t)\n"
            "got = torch.compile(reduce)(t)\nprint(want, got)\n")
    a = analyze_issue("[inductor] a reduction of a large tensor differs from eager", _issue(code), SILENT)
    assert a.pattern is not None
    assert (a.pattern.api, a.pattern.test_mode.name) == ("torch.amax", "compile:inductor")


def test_a_name_rebound_from_an_op_to_a_value_no_longer_calls_the_op() -> None:
    code = "import torch\nf = torch.exp\nf = lambda v: v * 2\nprint(f(torch.ones(2)))\n"
    assert "torch.exp" not in [c.api for c in scan_tree(ast.parse(code)).calls]


def test_a_name_bound_to_a_dtype_is_not_an_op_alias() -> None:
    code = "import torch\nlow = torch.float16\nx = torch.ones(3, dtype=low)\nprint(low(x))\n"
    assert "torch.float16" not in [c.api for c in scan_tree(ast.parse(code)).calls]
