"""Analyzer rules on small issues written for these tests (not from the labelled samples)."""

from __future__ import annotations

import pytest

from agent.extract.analyzer import analyze_issue
from agent.extract.codeblocks import code_blocks
from agent.harness.generate import reference_mode_for
from agent.patterns.schema import PatternKind

SILENT = ["module: correctness (silent)"]


def _issue(code: str, prose: str = "The results are wrong and differ silently.") -> str:
    return f"### Describe the bug\n\n{prose}\n\n```python\n{code}\n```\n"


def test_aliases_resolve_through_the_snippets_imports() -> None:
    code = "import torch as T\nfrom torch.nn import functional as fn\nx = T.randn(4)\nprint(T.compile(fn.silu)(x) - fn.silu(x))"
    a = analyze_issue("silu differs under compile", _issue(code), SILENT)
    assert a.pattern is not None and a.pattern.api == "torch.nn.functional.silu"
    assert a.pattern.test_mode.name == "compile:inductor"


def test_compile_backend_and_options_become_the_test_mode() -> None:
    code = "import torch\nf = torch.compile(torch.cosh, backend='aot_eager', dynamic=True)\nx = torch.randn(3)\nassert torch.allclose(f(x), torch.cosh(x), atol=1e-4)"
    a = analyze_issue("cosh wrong under aot_eager", _issue(code), SILENT)
    assert a.pattern is not None
    assert a.pattern.test_mode.name == "compile:aot_eager"
    assert a.pattern.test_mode.options == {"dynamic": True}
    assert a.pattern.oracle.atol == 1e-4


def test_autocast_is_a_precision_pattern() -> None:
    code = (
        "import torch\nx = torch.randn(8, 8)\nref = torch.linalg.inv(x)\n"
        "with torch.autocast('cpu', dtype=torch.bfloat16):\n    out = torch.linalg.inv(x)\nprint((out - ref).abs().max())"
    )
    a = analyze_issue("linalg.inv under autocast is far off", _issue(code), SILENT)
    assert a.pattern is not None
    assert (a.pattern.kind.value, a.pattern.test_mode.name) == ("Precision_Mismatch", "autocast:bfloat16")
    assert a.pattern.api == "torch.linalg.inv"


def test_out_variant_needs_out_kwarg_and_words() -> None:
    code = "import torch\na = torch.randn(5)\no = torch.empty(5)\ntorch.sinh(a, out=o)\nprint(o, torch.sinh(a))"
    a = analyze_issue("sinh with out= gives a different result", _issue(code, "Passing out= changes the values."), SILENT)
    assert a.pattern is not None and a.pattern.test_mode.name == "variant:out"
    assert a.pattern.kind.value == "Variant_Mismatch"


def test_vmap_is_a_batch_pattern() -> None:
    code = "import torch\nx = torch.randn(3, 4)\nv = torch.vmap(torch.special.entr)(x)\nl = torch.stack([torch.special.entr(r) for r in x])\nprint(torch.equal(v, l))"
    a = analyze_issue("special.entr under vmap differs from a loop", _issue(code), SILENT)
    assert a.pattern is not None and (a.pattern.kind.value, a.pattern.api) == ("Batch_Mismatch", "torch.special.entr")


def test_ties_are_a_false_alarm() -> None:
    code = "import torch\nx = torch.tensor([1.0, 3.0, 3.0, 2.0])\nprint(torch.topk(x, 1).indices, torch.topk(x.cuda(), 1).indices)"
    a = analyze_issue("topk returns a different index on CUDA", _issue(code), SILENT)
    assert a.triage.false_alarm_class == "ties" and not a.triage.is_silent_bug


def test_duplicate_indices_without_accumulate_are_a_false_alarm() -> None:
    code = "import torch\nidx = torch.tensor([0, 2, 0])\nv = torch.tensor([1.0, 2.0, 3.0])\nout = torch.zeros(3).index_put_((idx,), v)\nprint(out, torch.zeros(3).cuda().index_put_((idx.cuda(),), v.cuda()))"
    a = analyze_issue("index_put_ differs between CPU and CUDA", _issue(code), SILENT)
    assert a.triage.false_alarm_class == "duplicate_indices"


def test_nan_that_ieee_demands_is_a_false_alarm() -> None:
    code = "import torch\nx = torch.tensor([-1.0, 4.0])\nprint(torch.compile(torch.sqrt)(x), torch.isnan(torch.sqrt(x)))"
    a = analyze_issue("sqrt returns nan under compile", _issue(code), ["module: NaNs and Infs"])
    assert a.triage.false_alarm_class == "ieee_nan"


def test_random_op_inside_compiled_code_is_a_false_alarm() -> None:
    code = "import torch\ndef f(x):\n    return x + torch.rand_like(x)\nx = torch.zeros(3)\nprint(torch.compile(f)(x) - f(x))"
    a = analyze_issue("compiled noise differs from eager", _issue(code), SILENT)
    assert a.triage.false_alarm_class == "random_ops"


def test_dropout_with_training_off_inside_compiled_code_draws_nothing() -> None:
    code = ("import torch\ndef f(x):\n    y = torch.nn.functional.dropout(x, 0.3, False)\n    return y.exp()\n"
            "x = torch.ones(3)\nprint(torch.compile(f)(x), f(x))")
    a = analyze_issue("compiled function differs from eager", _issue(code), SILENT)
    assert a.triage.false_alarm_class is None and a.triage.is_silent_bug


def test_dropout_in_training_inside_compiled_code_is_still_a_false_alarm() -> None:
    code = ("import torch\ndef f(x):\n    y = torch.nn.functional.dropout(x, 0.3, training=True)\n    return y.exp()\n"
            "x = torch.ones(3)\nprint(torch.compile(f)(x), f(x))")
    a = analyze_issue("compiled function differs from eager", _issue(code), SILENT)
    assert a.triage.false_alarm_class == "random_ops"


def test_random_weights_drawn_in_a_constructor_are_shared_by_both_modes() -> None:
    code = ("import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.w = torch.nn.Parameter(torch.rand(4))\n    def forward(self, x):\n"
            "        return torch.logaddexp(x, self.w)\nm = M()\nx = torch.zeros(4)\n"
            "print(m(x), torch.jit.trace(m, x)(x))")
    a = analyze_issue("traced module gives another result", _issue(code), SILENT)
    assert a.triage.false_alarm_class is None and a.triage.is_silent_bug


@pytest.mark.parametrize("with_eval", [False, True])
def test_batchnorm_traced_in_train_mode(with_eval: bool) -> None:
    code = (
        "import torch\nimport torch.nn as nn\nm = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3))\n"
        + ("m.eval()\n" if with_eval else "")
        + "x = torch.randn(2, 3, 4, 4)\nt = torch.jit.trace(m, x)\nprint(torch.allclose(t(x), m(x)))"
    )
    a = analyze_issue("traced model output differs", _issue(code), SILENT)
    if with_eval:
        assert a.triage.false_alarm_class is None and a.triage.is_silent_bug
    else:
        assert a.triage.false_alarm_class == "train_mode_tracing"
        assert a.pattern is not None and a.pattern.api == "torch.nn.BatchNorm2d"


@pytest.mark.parametrize(("printed", "false_alarm"), [("1.1920928955078125e-07", True), ("0.5", False)])
def test_tight_comparison_is_a_false_alarm_only_at_rounding_level(printed: str, false_alarm: bool) -> None:
    code = "import torch\nx = torch.randn(64)\nc = torch.compile(torch.tanh)(x)\nprint((c - torch.tanh(x)).abs().max().item())\ntorch.testing.assert_close(c, torch.tanh(x), atol=0, rtol=0)"
    body = _issue(code) + f"\n```\n{printed}\n```\n"
    a = analyze_issue("tanh not identical under compile", body, SILENT)
    assert (a.triage.false_alarm_class == "bitwise_comparison") is false_alarm
    assert a.triage.is_silent_bug is not false_alarm


def test_no_api_is_invented() -> None:
    a = analyze_issue("Something is numerically wrong", "Results are wrong and differ, silently.", SILENT)
    assert a.pattern is None and a.pattern_error


def test_crash_report_is_not_silent() -> None:
    code = "import torch\ntorch.nn.functional.unfold(torch.randn(1, 1, 2, 2), kernel_size=-1)"
    body = _issue(code, "This segfaults.") + "\n```\nSegmentation fault (core dumped)\n```\n"
    a = analyze_issue("Segfault in unfold", body, ["module: crash"])
    assert not a.triage.is_silent_bug and a.pattern is not None and a.pattern.kind.value == "Crash"


@pytest.mark.parametrize("log", [
    "/src/kernels/Sort.mm:91: failed assertion `axis 5 is out of range'\nzsh: abort      python repro.py",
    "python: kernel.cpp:12: void run(): Assertion `dim < 4' failed.",
    "terminate called after throwing an instance of 'c10::Error'",
])
def test_a_process_that_died_on_a_native_assertion_is_a_crash_not_a_false_alarm(log: str) -> None:
    code = "import torch\nx = torch.ones(2, 3, 1, 1, 1)\nprint(torch.topk(x, k=2, dim=0))"
    a = analyze_issue("topk dies for 5-D inputs", _issue(code, "It never returns:") + f"\n```\n{log}\n```\n", [])
    assert not a.triage.is_silent_bug and a.triage.false_alarm_class is None
    assert a.triage.reason == "a crash, not a silent wrong result"


def test_a_python_assertion_in_the_repro_is_not_a_crash() -> None:
    code = "import torch\nx = torch.rand(4)\nassert torch.allclose(torch.sigmoid(x), 1 / (1 + torch.exp(-x)))"
    log = "AssertionError: assertion failed for the float16 input"
    a = analyze_issue("sigmoid differs from its formula", _issue(code, "Wrong values:") + f"\n```\n{log}\n```\n", [])
    assert a.triage.reason != "a crash, not a silent wrong result"


def test_code_blocks_handle_crlf_doctest_and_output() -> None:
    body = "text\r\n\r\n```\r\n>>> import torch\r\n>>> torch.sinc(torch.tensor([0.0]))\r\n```\r\n\r\n```\r\ncpu : tensor([1.])\r\n```\r\n"
    blocks = code_blocks(body)
    assert [b.is_python for b in blocks] == [True, False]
    assert blocks[0].text.startswith("import torch")


def test_code_is_parsed_never_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    marker = tmp_path / "ran"
    code = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\nimport torch\nprint(torch.compile(torch.erf)(torch.zeros(1)))"
    analyze_issue("erf differs under compile", _issue(code), SILENT)
    assert not marker.exists()


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_FRAGMENTS = st.sampled_from([
    "```python\n", "```\n", "import torch\n", "import torch.nn.functional as F\n", "x = torch.randn(3)\n",
    "y = torch.compile(F.gelu)(x)\n", "print((y - F.gelu(x)).abs().max())\n", "torch.jit.trace(m, x)\n",
    "x.half().cumsum(0)\n", "float('nan')\n", "def f(\n", "tensor([1., nan])\n", "wrong result\n",
    "module: correctness (silent)", "\r\n", ">>> torch.erfinv(x)\n", "}{{{body}}}", "Segmentation fault\n",
])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=st.text(max_size=40), parts=st.lists(st.one_of(_FRAGMENTS, st.text(max_size=30)), max_size=25),
       labels=st.lists(st.sampled_from(SILENT + ["oncall: jit", "module: crash", "feature"]), max_size=3))
def test_arbitrary_text_never_raises_and_never_invents_an_api(title: str, parts: list[str], labels: list[str]) -> None:
    body = "".join(parts)
    a = analyze_issue(title, body, labels)
    if a.pattern is not None:
        # title words are read case-folded on purpose ("SVD gives wrong values" is about torch.svd), so the name
        # must be in the text in some case: a title "MM" naming torch.mm is read, not invented
        short = a.pattern.api.rsplit(".", 1)[-1].lower()
        assert short in (title + body).lower() or (a.pattern.api == "torch.matmul" and "@" in body)


@pytest.mark.parametrize("expression", ["(" * 2000 + "1" + ")" * 2000, "+".join(["x"] * 20000)])
def test_deeply_nested_code_is_handled(expression: str) -> None:
    code = f"import torch\nx = torch.ones(3)\ny = {expression}\nprint(torch.compile(torch.sin)(y))"
    a = analyze_issue("torch.sin differs under torch.compile", _issue(code), SILENT)
    # the block is skipped, no RecursionError escapes; API and mode come from the title
    assert a.pattern is not None and (a.pattern.api, a.pattern.test_mode.name) == ("torch.sin", "compile:inductor")


_PRINTS_ONE_GRADIENT = ("import torch\nx = torch.tensor([0.5], requires_grad=True)\n"
                        "torch.nn.functional.elu(x, alpha=2.0).sum().backward()\nprint(x.grad)")


@pytest.mark.parametrize("claim, silent", [
    ("By the formula the gradient should be 1.0000 at this point.", True),
    ("The expected gradient here is 2.5e-01, from the derivative by hand.", True),
    ("I expected the backward to take 2.5 ms on this input.", False),
    ("I expected 2 values in the gradient.", False),
])
def test_a_stated_expected_value_is_the_other_side_of_a_printed_result(claim: str, silent: bool) -> None:
    """Note [An expected value stated]: the code prints one side, the prose gives the number it should be."""
    a = analyze_issue("A question about elu's backward", _issue(_PRINTS_ONE_GRADIENT, claim), [])
    assert a.triage.is_silent_bug is silent


def test_legacy_typed_constructors_name_their_dtype_and_device() -> None:
    code = ("import torch\nprint(torch.cuda.CharTensor(200).fill_(1).cumsum(0)[-1])\n"
            "print(torch.ShortTensor(200).fill_(1).cumsum(0)[-1])\n")
    facts = analyze_issue("running sum of small ints wraps around", _issue(code), SILENT).facts
    assert facts.dtypes == ["int8", "int16"] and facts.cuda and facts.devices == ["cuda"]


def test_a_legacy_type_given_to_type_names_its_dtype() -> None:
    facts = analyze_issue("prod drifts", _issue("import torch\nx = torch.rand(5).type(torch.DoubleTensor)\n"
                                                "print(x.prod())"), SILENT).facts
    assert facts.dtypes == ["float64"] and not facts.cuda


def test_a_title_naming_only_the_device_makes_a_device_pattern_over_a_low_dtype_in_the_code() -> None:
    body = ("### Describe the bug\n\nOn MPS, gathering rows of a large bfloat16 table returns zeros past some row.\n\n"
            "```python\nimport torch\nw = torch.ones(70000, 40000, dtype=torch.bfloat16).to('mps')\n"
            "ids = torch.tensor([0, 69999], device='mps')\nprint(torch.index_select(w, 0, ids).float().sum(1).cpu())\n```\n")
    pattern = analyze_issue("[MPS] index_select returns zero rows for a large table", body, ["module: mps"]).pattern
    assert pattern is not None and pattern.kind == PatternKind.Device_Mismatch
    assert pattern.test_mode.options == {"device": "mps"}
    assert pattern.trigger.dtypes == ["bfloat16"]


def test_a_title_naming_the_dtype_and_the_device_keeps_the_precision_pattern() -> None:
    body = ("```python\nimport torch\nw = torch.randn(64, 64, dtype=torch.bfloat16).to('mps')\n"
            "print(torch.index_select(w, 0, torch.tensor([1, 2], device='mps')))\n```\n")
    pattern = analyze_issue("[MPS] index_select loses precision in bfloat16", body, ["module: mps"]).pattern
    assert pattern is not None and pattern.kind == PatternKind.Precision_Mismatch


def test_a_backward_compared_between_cpu_and_gpu_is_checked_on_the_gpu() -> None:
    body = ("The CPU and the GPU disagree on this one.\n\n```python\nimport torch\n"
            "x = torch.rand(1, 1, 5, 6, device='cuda', requires_grad=True)\n"
            "torch.nn.functional.interpolate(x, scale_factor=1.3, mode='bilinear').sum().backward()\n"
            "print(x.grad)\n```\n\nThe same code with device='cpu' prints all ones.\n")
    pattern = analyze_issue("interpolate results differ between devices", body, ["module: cuda"]).pattern
    assert pattern is not None and pattern.api == "torch.nn.functional.interpolate"
    assert pattern.test_mode.name == "grad:device:cuda" and pattern.kind == PatternKind.Gradient_Mismatch
    assert reference_mode_for(pattern.reference_mode.name, pattern.test_mode.name) == "grad"


def test_a_backward_run_on_the_gpu_alone_stays_a_gradient_check() -> None:
    body = ("```python\nimport torch\nx = torch.rand(4, device='cuda', requires_grad=True)\n"
            "torch.special.erfcx(x).sum().backward()\nprint(x.grad)\n```\n")
    pattern = analyze_issue("erfcx backward is wrong", body, []).pattern
    assert pattern is not None and pattern.test_mode.name == "grad"


_WHERE_REPRO = ("```python\nimport torch\nx = torch.tensor([-1.0, 2.0], requires_grad=True)\n"
                "y = torch.where(x > 0, torch.sqrt(x), torch.zeros_like(x))\ny.sum().backward()\nprint(x.grad)\n```\n\n"
                "```\ntensor([nan, 0.3536])\n```\n")


def test_a_nan_gradient_through_torch_where_is_the_ieee_nan_false_alarm() -> None:
    triage = analyze_issue("NaN gradient through torch.where", "The masked branch is never used.\n\n" + _WHERE_REPRO,
                           []).triage
    assert not triage.is_silent_bug and triage.false_alarm_class == "ieee_nan"
    assert "torch.where" in triage.reason


def test_a_wrong_finite_gradient_through_torch_where_stays_a_silent_bug() -> None:
    body = ("The gradient of the selected branch is off.\n\n```python\nimport torch\n"
            "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "torch.where(x > 0, x * x, x).sum().backward()\nprint(x.grad)  # prints [3., 5.], expected [2., 4.]\n```\n")
    triage = analyze_issue("torch.where backward gives the wrong gradient", body, []).triage
    assert triage.is_silent_bug and triage.false_alarm_class is None
