"""Note [Draws outside the compiled code] (scan.py) and what the analyzer reads around a compiled callable.

Reports written for these tests, in shapes real ones take: a repro whose helper seeds and draws the input, then
runs a module eagerly or compiled; a title that names the values a repro computes with; a repro that scales its
input in place before calling the op it reports.
"""

from __future__ import annotations

import ast

from agent.extract.analyzer import analyze_issue
from agent.extract.scan import scan_tree

SILENT = ["module: correctness (silent)"]


def _issue(code: str, prose: str) -> str:
    return f"### 🐛 Describe the bug\n\n{prose}\n\n```python\n{code}\n```\n"


def _draws(code: str) -> list[bool]:
    return [c.shared_draw for c in scan_tree(ast.parse(code)).calls if c.api == "torch.rand"]


SEEDED_HELPER = (
    "import torch\n\nclass Halve(torch.nn.Module):\n    def forward(self, x):\n        return x.div(2)\n\n"
    "def run(compiled):\n    torch.manual_seed(7)\n    x = torch.rand(3, 5)\n"
    "    m = Halve()\n    return torch.compile(m)(x) if compiled else m(x)\n\n"
    "print(torch.equal(run(False), run(True)))\n"
)


def test_a_seeded_draw_in_the_helper_that_runs_both_modes_is_shared() -> None:
    assert _draws(SEEDED_HELPER) == [True]


def test_an_unseeded_draw_in_a_helper_called_once_per_mode_is_not_shared() -> None:
    code = (
        "import torch\n\nclass Halve(torch.nn.Module):\n    def forward(self, x):\n        return x.div(2)\n\n"
        "def make():\n    return torch.rand(3, 5)\n\nm = Halve()\nprint(m(make()), torch.compile(m)(make()))\n"
    )
    assert _draws(code) == [False]


def test_a_draw_inside_the_compiled_module_is_not_shared() -> None:
    code = SEEDED_HELPER.replace("return x.div(2)", "return x.div(2) + torch.rand(5)")
    assert _draws(code) == [False, True]  # the forward comes first in the snippet


def test_a_draw_in_a_function_the_compiled_one_calls_is_not_shared() -> None:
    code = (
        "import torch\n\ndef noise(x):\n    return x + torch.rand(x.shape)\n\n"
        "def step(x):\n    return noise(x) * 2\n\n"
        "def main():\n    torch.manual_seed(0)\n    x = torch.rand(4)\n    print(step(x), torch.compile(step)(x))\n"
    )
    assert _draws(code) == [False, True]


def test_a_compiled_callable_the_snippet_does_not_define_leaves_every_draw_unshared() -> None:
    code = (
        "import torch\n\ndef main():\n    torch.manual_seed(0)\n    x = torch.rand(4)\n"
        "    f = torch.compile(getattr(torch, 'sin'))\n    print(f(x), torch.sin(x))\n"
    )
    assert _draws(code) == [False]


def test_a_seeded_input_outside_the_compiled_module_is_no_rng_false_alarm() -> None:
    a = analyze_issue("compiled module halves differently from eager",
                      _issue(SEEDED_HELPER, "The compiled output differs from eager."), SILENT)
    assert a.triage.false_alarm_class is None
    assert a.pattern is not None and a.pattern.test_mode.name == "compile:inductor"


def test_a_draw_inside_the_compiled_module_is_still_an_rng_false_alarm() -> None:
    code = SEEDED_HELPER.replace("return x.div(2)", "return x.div(2) + torch.rand(5)")
    a = analyze_issue("compiled module halves differently from eager",
                      _issue(code, "The compiled output differs from eager."), SILENT)
    assert a.triage.false_alarm_class == "random_ops"


def test_a_draw_inside_compiled_code_with_inductors_fallback_random_is_no_rng_false_alarm() -> None:
    # Note [Inductor drawing eager's numbers]: seeded before each run, compiled code draws eager's numbers
    setting = "import torch\nimport torch._inductor.config\ntorch._inductor.config.fallback_random = True\n"
    code = SEEDED_HELPER.replace("return x.div(2)", "return x.div(2) + torch.rand(5)").replace(
        "import torch\n", setting, 1)
    a = analyze_issue("compiled module halves differently from eager",
                      _issue(code, "The compiled output differs from eager."), SILENT)
    assert a.triage.false_alarm_class is None and a.triage.is_silent_bug, a.triage.reason


def test_fallback_random_set_through_config_patch_is_read() -> None:
    code = ("import torch\nfrom torch._inductor import config\n\n@config.patch(fallback_random=True)\n"
            "def check():\n    torch.manual_seed(0)\n    return torch.compile(lambda: torch.rand(3))()\n")
    assert scan_tree(ast.parse(code)).fallback_random


def test_fallback_random_does_not_excuse_a_draw_inside_traced_code() -> None:
    code = ("import torch\nimport torch._inductor.config as cfg\ncfg.fallback_random = True\n\n"
            "def noisy(x):\n    return x + torch.rand(4)\n\ntorch.manual_seed(0)\nx = torch.ones(4)\n"
            "t = torch.jit.trace(noisy, (x,))\ntorch.manual_seed(1)\na = noisy(x)\ntorch.manual_seed(1)\n"
            "print(torch.equal(a, t(x)))\n")
    a = analyze_issue("traced function differs from eager", _issue(code, "The traced output differs."), SILENT)
    assert a.triage.false_alarm_class == "random_ops"


def test_a_module_moved_to_a_device_is_still_an_instance_of_its_class() -> None:
    assert _draws(SEEDED_HELPER.replace("m = Halve()", "m = Halve().cuda().eval()")) == [True]


def test_a_dtype_round_trip_is_the_op_when_the_compiled_code_only_converts() -> None:
    code = (
        "import torch\n\nclass RoundTrip(torch.nn.Module):\n    def forward(self, x):\n"
        "        return x.to(torch.bfloat16).to(torch.float32)\n\n"
        "x = torch.linspace(0, 1, 9)\nm = RoundTrip()\nassert torch.equal(m(x), torch.compile(m)(x))\n"
    )
    a = analyze_issue("compiled bf16 round trip disagrees with eager",
                      _issue(code, "The assertion fails."), SILENT)
    assert a.pattern is not None
    assert (a.pattern.api, a.pattern.test_mode.name) == ("torch.Tensor.to", "compile:inductor")


def test_a_title_word_the_code_binds_as_a_value_is_not_an_op() -> None:
    code = (
        "import torch\n\ndef mix(a, cos, sin):\n    return torch.cat((a * cos, a * sin), dim=-1)\n\n"
        "a, cos, sin = torch.ones(2, 4), torch.ones(2, 4), torch.zeros(2, 4)\n"
        "print(mix(a, cos, sin) - torch.compile(mix)(a, cos, sin))\n"
    )
    a = analyze_issue("compiled mixing with broadcast cos/sin tables is off", _issue(code, "Not zero."), SILENT)
    assert a.pattern is not None
    assert a.pattern.api == "torch.cat"


def test_an_input_scaled_in_place_does_not_make_an_in_place_report() -> None:
    code = (
        "import torch\nv = torch.ones(3, 70000, device='cuda')\nv /= 7\nout = v.cumsum(dim=-1)\n"
        "print(out[0, -3:])\n"
    )
    a = analyze_issue("cumsum is wrong for long rows", _issue(code, "The last values are too small."), SILENT)
    assert a.pattern is not None
    assert (a.pattern.api, a.pattern.test_mode.name) == ("torch.cumsum", "device:cuda")
