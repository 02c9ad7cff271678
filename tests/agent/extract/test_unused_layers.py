"""Note [Layers built and never run] (scan.py): layers an ``__init__`` builds that no code reads are not the API.

Reports written for these tests, in the shape fuzzer-written tracker reports take: a model whose constructor builds
layers its forward never calls.
"""

from __future__ import annotations

import ast

from agent.extract.analyzer import analyze_issue
from agent.extract.scan import scan_tree

SILENT = ["module: correctness (silent)"]

DEAD_LAYERS = (
    "import torch\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.a = torch.nn.Linear(4, 4)\n        self.b = torch.nn.Linear(4, 4)\n"
    "        self.c = torch.nn.Linear(4, 2)\n\n    def forward(self, x):\n"
    "        return torch.nn.functional.softplus(x, beta=3)\n\n"
    "net = Net()\nx = torch.randn(2, 4)\nout = torch.compile(net)(x)\nprint((out - net(x)).abs().max())\n"
)


def _issue(code: str, prose: str) -> str:
    return f"### 🐛 Describe the bug\n\n{prose}\n\n```python\n{code}\n```\n"


def test_layers_forward_never_calls_are_not_the_api() -> None:
    a = analyze_issue("compiled model output differs from eager",
                      _issue(DEAD_LAYERS, "The compiled output is far from the eager one."), SILENT)
    assert a.pattern is not None
    assert (a.pattern.api, a.pattern.kind.value) == ("torch.nn.functional.softplus", "Compile_Eager_Mismatch")


def test_a_layer_forward_calls_stays_among_the_calls() -> None:
    code = DEAD_LAYERS.replace("return torch.nn.functional.softplus(x, beta=3)", "return self.b(x)")
    apis = [c.api for c in scan_tree(ast.parse(code)).calls]
    assert "torch.nn.Linear" in apis


def test_a_layer_read_through_its_weight_stays_among_the_calls() -> None:
    code = DEAD_LAYERS.replace("torch.nn.functional.softplus(x, beta=3)",
                               "torch.nn.functional.linear(x, self.a.weight)")
    calls = scan_tree(ast.parse(code)).calls
    assert sum(c.api == "torch.nn.Linear" for c in calls) == 1  # self.a is read; self.b and self.c are not


def test_layers_reached_through_children_are_all_kept() -> None:
    code = DEAD_LAYERS.replace("return torch.nn.functional.softplus(x, beta=3)",
                               "for layer in self.children():\n            x = layer(x)\n        return x")
    calls = scan_tree(ast.parse(code)).calls
    assert sum(c.api == "torch.nn.Linear" for c in calls) == 3
