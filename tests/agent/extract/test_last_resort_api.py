"""Note [The op left when nothing is named] (select.py) and Note [Operators as a last resort] (scan.py).

Reports written for these tests, in the shapes real ones take: a repro that only does arithmetic on tensors, a
gradient check through ``.sum().backward()``, a title that names the method the repro prints.
"""

from __future__ import annotations

import ast

from agent.extract.analyzer import analyze_issue
from agent.extract.scan import scan_tree
from agent.extract.select import choose_api

SILENT = ["module: correctness (silent)"]


def _issue(code: str, prose: str) -> str:
    return f"### 🐛 Describe the bug\n\n{prose}\n\n```python\n{code}\n```\n"


def test_arithmetic_inside_a_scripted_function_is_the_op_under_test() -> None:
    code = (
        "import torch\n\n@torch.jit.script\ndef masked(a: torch.Tensor, m: torch.Tensor) -> torch.Tensor:\n"
        "    return a - m * 1e4\n\nx = torch.ones(3, dtype=torch.float16)\n"
        "first = masked(x, x)\nsecond = masked(x, x)\nassert torch.equal(first, second)\n"
    )
    a = analyze_issue("scripted masking gives a different value on the second call",
                      _issue(code, "The second call returns a different number than the first."), SILENT)
    assert a.pattern is not None
    assert (a.pattern.api, a.pattern.test_mode.name) == ("torch.sub", "jit.script")


def test_the_sum_that_feeds_backward_is_the_loss_not_the_op() -> None:
    code = (
        "import torch\na = torch.randn(4, 3, 1, requires_grad=True)\nb = torch.randn(4, 3, requires_grad=True)\n"
        "(a + b).sum().backward()\nprint(b.shape, b.grad.shape)\n"
    )
    a = analyze_issue("broadcast add gives a gradient of the wrong shape",
                      _issue(code, "The gradient of b has the wrong shape."), SILENT)
    assert a.pattern is not None
    assert (a.pattern.api, a.pattern.kind.value) == ("torch.add", "Gradient_Mismatch")


def test_a_title_op_the_repro_only_prints_is_still_the_api() -> None:
    code = "import torch\nbig = torch.ones(2**24 + 8, device='cuda')\nprint(big.mean())\n"
    a = analyze_issue("`.mean()` of a large tensor is wrong on cuda",
                      _issue(code, "It prints 0.5 where 1 is expected."), SILENT)
    assert a.pattern is not None
    assert a.pattern.api == "torch.mean"


def test_a_computing_method_in_the_users_module_beats_top_level_plumbing() -> None:
    code = (
        "import torch\n\nclass Scale(torch.nn.Module):\n    def forward(self, x):\n"
        "        y = x / x.mean(-1, keepdim=True)\n        return y.abs()\n\n"
        "m = torch.jit.script(Scale())\nx = torch.rand(16, 8)\nfor _ in range(3):\n"
        "    print(m(x).isfinite().all().item(), m(x).sum())\n"
    )
    a = analyze_issue("scripted module returns non-finite values after the first call",
                      _issue(code, "After the first call the output holds inf."), SILENT)
    assert a.pattern is not None
    assert a.pattern.api == "torch.mean"


def test_a_named_op_wins_over_operators() -> None:
    facts = scan_tree(ast.parse("import torch\nx = torch.randn(3)\ny = torch.sinh(x) * 2 + x\n"))
    assert choose_api(facts.calls, "sinh is off", "", facts.operators)[0] == "torch.sinh"


def test_arithmetic_on_plain_numbers_is_not_an_operator_under_test() -> None:
    facts = scan_tree(ast.parse("n = 3\nk = len([1, 2]) * 2 + n\ns = 'a' + 'b'\n"))
    assert facts.operators == []
    assert choose_api(facts.calls, "a question", "", facts.operators)[0] is None


def test_operators_alone_do_not_make_a_repro() -> None:
    a = analyze_issue("values differ", _issue("a = b + c\nprint(a - d)", "They differ."), SILENT)
    assert not a.triage.has_repro


def test_the_gap_between_two_results_is_measured_not_under_test() -> None:
    code = (
        "import torch\nfrom somezoo import build\n\nnet = build('wide-net').eval()\nx = torch.randn(2, 3, 16, 16)\n"
        "a = net(x)\nb = net(x.contiguous(memory_format=torch.channels_last))\nprint((a - b).abs().mean().item())\n"
    )
    a = analyze_issue("zoo network differs for channels-last input", _issue(code, "The outputs differ."), SILENT)
    assert a.pattern is None and a.pattern_error == "no torch API found in the issue"


def test_a_reduction_of_one_result_is_still_the_op_left() -> None:
    code = "import torch\nx = torch.full((3, 5), 0.1, dtype=torch.float16)\nprint(x.mean(), x.double().mean())\n"
    a = analyze_issue("low precision average drifts", _issue(code, "The float16 value is off."), SILENT)
    assert a.pattern is not None and a.pattern.api == "torch.mean"


def test_a_shift_of_a_torch_result_is_the_bitwise_op_under_test() -> None:
    code = "import torch\nprint(1 << torch.arange(6, device='mps'))\n"
    a = analyze_issue("left shift by a tensor gives a wrong sequence on the accelerator",
                      _issue(code, "It prints 0, 2, 4 where powers of two are expected."), SILENT)
    assert a.pattern is not None
    assert (a.pattern.api, a.pattern.kind.value) == ("torch.bitwise_left_shift", "Device_Mismatch")


def test_bitwise_operators_on_plain_names_are_not_an_op_under_test() -> None:
    facts = scan_tree(ast.parse("import torch\nn = int(input())\nmask = 1 << n\nflags = seen | other\n"))
    assert facts.operators == []


def test_a_slice_write_of_a_tensor_is_the_copy_under_test() -> None:
    """Note [Slice writes as a last resort]: ``out[:] = rows[2]`` takes a view and copies into it."""
    code = ("import torch\nrows = torch.arange(8.).reshape(2, 4).to('mps')\nout = torch.empty(4, device='mps')\n"
            "out[:] = rows[1]\nprint(out)\n")
    a = analyze_issue("writing a row through a slice leaves stale numbers on the accelerator",
                      _issue(code, "It prints the old contents instead of 4, 5, 6, 7."), SILENT)
    assert a.pattern is not None
    assert (a.pattern.api, a.pattern.kind.value) == ("torch.Tensor.copy_", "Device_Mismatch")


def test_slice_writes_of_numbers_are_set_up_not_an_op_under_test() -> None:
    code = ("import math\nimport torch\nx = torch.randn(3, 3)\nk = 2\nx[0] = float('nan')\nx[1, :] = -math.inf\n"
            "x[:, 2] = k\nx[2] = torch.nan\n")
    assert scan_tree(ast.parse(code)).operators == []


def test_an_op_the_snippet_runs_is_chosen_before_a_slice_write() -> None:
    code = ("import torch\nx = torch.randn(4, 4, device='mps')\ny = torch.zeros(4, 4, device='mps')\n"
            "y[:, 1] = x[:, 1]\nprint(y.logsumexp(0))\n")
    a = analyze_issue("column copy then logsumexp is wrong on the accelerator", _issue(code, "The sums are off."),
                      SILENT)
    assert a.pattern is not None and a.pattern.api == "torch.logsumexp"


def test_a_tensor_built_from_a_numpy_value_is_a_tensor_operand() -> None:
    # torch.tensor(np.random.rand()) holds a tensor: arithmetic on it runs torch ops, unlike arithmetic on numpy values
    code = (
        "import numpy as np\nimport torch\nw = torch.tensor(np.random.rand() + 1.0, requires_grad=True)\n"
        "y = 3 / w\ny.backward()\nprint(w.grad, -3 / w.detach() ** 2)\n"
    )
    a = analyze_issue("gradient of a scalar quotient disagrees with the closed form",
                      _issue(code, "The gradient is slightly off from the closed form."), SILENT)
    assert a.pattern is not None
    assert (a.pattern.api, a.pattern.kind.value) == ("torch.div", "Gradient_Mismatch")


def test_arithmetic_on_a_numpy_array_stays_out_of_the_operators() -> None:
    facts = scan_tree(ast.parse("import numpy as np\nimport torch\nv = np.ones(3)\nu = v * 2\n"
                                "print(torch.sigmoid(torch.from_numpy(u)))\n"))
    assert not facts.operators
