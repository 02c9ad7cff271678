"""Issue 21, items 2 and 3: the tracker's conventions and the public op behind internal spellings.

Every report here is written for these tests, in our own words, in the shapes real reports take
(PyTorch's bug template, a collect_env dump, a thread rendered into one text, a body cut mid-fence).
"""

from __future__ import annotations

import pytest

from agent.extract.analyzer import analyze_issue, analyze_raw
from agent.extract.codeblocks import code_blocks, unfenced_code
from agent.extract.public_ops import api_for_mode, is_backward_spelling, public_op
from agent.extract.thread import for_rules, split_thread

SILENT = ["module: correctness (silent)"]
ENV = """### Versions

Collecting environment information...
PyTorch version: 2.5.0
Is debug build: False
CUDA used to build PyTorch: 12.1
OS: Ubuntu 22.04 LTS (x86_64)
[pip3] numpy==1.26.4
[pip3] torch==2.5.0
"""


def _template(code: str, expected: str = "Both calls should print the same numbers.", title_line: str = "") -> str:
    return (f"## 🐛 Bug\n\n{title_line}Summing in half precision gives a value far from the float32 sum.\n\n"
            f"## To Reproduce\n\n```python\n{code.strip()}\n```\n\n"
            f"## Expected behavior\n\n{expected}\n\n{ENV}")


HALF_SUM = """
import torch
x = torch.full((4096,), 0.1)
full, half = x.sum(), x.half().sum()
print(full, half)
"""


# --------------------------------------------------------------------------- tracker conventions (item 2)

def test_template_headings_do_not_dismiss_a_labelled_silent_report() -> None:
    analysis = analyze_issue("sum of a float16 tensor is wrong", _template(HALF_SUM), SILENT)
    assert analysis.triage.is_silent_bug, analysis.triage.reason
    assert analysis.pattern is not None and analysis.pattern.api == "torch.sum"


def test_expected_behaviour_in_the_description_is_the_reporters_claim() -> None:
    body = _template(HALF_SUM, expected="This is not expected behaviour: the float16 sum should be close to 409.6.")
    assert analyze_issue("sum of a float16 tensor is wrong", body, []).triage.is_silent_bug


def test_a_maintainers_dismissal_in_a_comment_still_counts() -> None:
    analysis = analyze_issue("sum of a float16 tensor is wrong", _template(HALF_SUM), [],
                             ["That is expected behaviour for float16 accumulation of this length."])
    assert not analysis.triage.is_silent_bug


def test_collect_env_and_tracebacks_are_not_read_by_the_rules() -> None:
    text = ("Results differ.\n\nTraceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n"
            "    y = f(x)\nRuntimeError: expected all tensors to be on the same device\n\nAfter the trace.\n\n" + ENV)
    kept = for_rules(text)
    assert "Results differ." in kept and "After the trace." in kept
    assert "expected all tensors" not in kept and "PyTorch version" not in kept and "pip3" not in kept


def test_closed_with_a_fix_counts_as_confirmed() -> None:
    code = ("import torch\nx = torch.tensor([0.5, 2.0])\ny = torch.compile(torch.atan)(x)\n"
            "print(y, torch.atan(x))")
    title = "compiled atan returns a different value"
    issue = {"title": title, "body": f"```python\n{code}\n```\n", "labels": [], "state": "closed",
             "comments": [{"body": "Thanks, fixed by #4321 (the lowering used the wrong branch)."}]}
    analysis = analyze_raw(issue)
    assert analysis.triage.is_silent_bug and "confirmed" in analysis.triage.reason


def test_a_fix_reference_beats_a_dismissal_and_the_false_alarm_rules() -> None:
    code = ("import torch\nx = torch.zeros(3)\ndef f(t):\n    return t + torch.rand_like(t)\n"
            "print(torch.compile(f)(x) - f(x))")
    analysis = analyze_issue("compiled function differs from eager", f"```python\n{code}\n```\n", SILENT,
                             ["Not a bug at first sight.", "The fix was merged in the nightly; it was a real problem."])
    assert analysis.triage.false_alarm_class is None and analysis.triage.is_silent_bug


def test_state_reason_not_planned_counts_as_not_a_bug() -> None:
    body = _template(HALF_SUM)
    issue = {"title": "sum of a float16 tensor is wrong", "body": body, "labels": [],
             "state": "closed", "state_reason": "not_planned"}
    analysis = analyze_raw(issue)
    assert not analysis.triage.is_silent_bug and "not planned" in analysis.triage.reason
    reopened = analyze_raw({**issue, "state": "open", "state_reason": None})
    assert reopened.triage.is_silent_bug


def test_a_high_priority_label_confirms_a_report_with_a_feature_label() -> None:
    code = "import torch\nx = torch.tensor(0.3)\ny = x.expand(4)\nprint(y.sin(), y.clone().sin_())\nprint(y.sin_())"
    body = f"In-place sin on an expanded tensor reads values it already wrote.\n```\n{code}\n```\n"
    plain = analyze_issue("sin_ through an expanded view", body, ["enhancement"])
    confirmed = analyze_issue("sin_ through an expanded view", body, ["enhancement", "high priority", "triaged"])
    assert not plain.triage.is_silent_bug
    assert confirmed.triage.is_silent_bug and confirmed.pattern is not None


def test_a_thread_rendered_into_one_text_is_split_by_author() -> None:
    body = ("owner/repo · issue #7 · closed · Python\nlabels: module: nn\n# atan is off\n\n"
            "alice · description · 2024-03-01\nThe repro:\n\n```python\nimport torch\nprint(torch.atan(torch.ones(2)))\n```\n\n"
            "bob · comment · 2024-03-02\nWorks as intended.\n\n"
            "alice · comment · 2024-03-03\nThanks, I confirmed it was my setup.\n")
    thread = split_thread(body)
    assert thread.reporter == "alice" and thread.description.startswith("The repro:")
    assert [c.author for c in thread.comments] == ["bob", "alice"]
    assert thread.others() == ["Works as intended."]


# --------------------------------------------------------------------------- code as real reports carry it

def test_a_fence_cut_off_at_the_end_of_the_text_is_still_code() -> None:
    body = "Repro:\n```python\nimport torch\nx = torch.ones(3)\ny = torch.cumsum(x, 0)\nprint(torch.allclose("
    blocks = code_blocks(body)
    assert len(blocks) == 1 and blocks[0].is_python and "torch.cumsum" in blocks[0].text


def test_a_python_2_print_statement_is_dropped_not_fatal() -> None:
    body = "```python\nimport torch\nx = torch.zeros(2, requires_grad=True)\nx.norm().backward()\nprint x.grad\n```\n"
    analysis = analyze_issue("gradient of norm at zero is nan", body, [])
    assert analysis.pattern is not None and analysis.pattern.api == "torch.norm"


def test_code_pasted_without_a_fence_is_read() -> None:
    text = "## To Reproduce\n\nimport torch\nx = torch.ones(2, 3)\nprint(torch.logcumsumexp(x, 1))\n\n## Expected behavior\n"
    blocks = unfenced_code(text)
    assert len(blocks) == 1 and "logcumsumexp" in blocks[0].text


def test_a_commented_out_mode_line_is_the_mode_the_reporter_toggles() -> None:
    code = ("import torch\n# f = torch.jit.script(f)   <- uncomment to see the difference\n"
            "def f(x):\n    return torch.trunc(x * 3)\nprint(f(torch.tensor([0.7])))")
    analysis = analyze_issue("trunc gives a different value when scripted", f"```python\n{code}\n```\n", SILENT)
    assert analysis.pattern is not None and analysis.pattern.test_mode.name == "jit.script"


# --------------------------------------------------------------------------- public op behind internal spellings (item 3)

def test_an_aten_overload_maps_to_the_public_op() -> None:
    assert public_op("torch.ops.aten.logaddexp.default") == "torch.logaddexp"
    assert public_op("torch.ops.aten.linalg_vector_norm.default") == "torch.linalg.vector_norm"
    code = ("import torch\nx = torch.randn(5)\ny = torch.randn(5)\n"
            "print(torch.ops.aten.logaddexp.default(x, y), torch.ops.aten.logaddexp.default(x.cuda(), y.cuda()))")
    analysis = analyze_issue("logaddexp differs between cpu and cuda", f"```python\n{code}\n```\n", SILENT)
    assert analysis.pattern is not None and analysis.pattern.api == "torch.logaddexp"


def test_names_that_exist_but_may_not_be_fuzzed_are_never_respelled() -> None:
    assert public_op("torch.jit.trace") is None and public_op("torch.load") is None
    assert public_op("torch.ops.mylib.double_it") is None


@pytest.mark.parametrize(("internal", "public"), [
    ("torch.ops.aten.replication_pad2d.default", "torch.nn.functional.pad"),
    ("torch.ops.aten.constant_pad_nd.default", "torch.nn.functional.pad"),
    ("torch.ops.aten._upsample_nearest_exact2d.vec", "torch.nn.functional.interpolate"),
    ("torch.ops.aten.native_group_norm.default", "torch.group_norm"),
    ("torch._C._nn.reflection_pad1d", "torch.nn.functional.pad"),
    ("torch._C._nn.gelu", "torch.nn.functional.gelu"),
    ("torch._C._linalg.linalg_slogdet", "torch.linalg.slogdet"),
    ("torch._C._special.special_i0e", "torch.special.i0e"),
])
def test_a_kernel_or_binding_name_maps_to_the_public_op_that_runs_it(internal: str, public: str) -> None:
    assert public_op(internal) == public


def test_a_backward_kernel_maps_to_its_forward_op_and_is_known_as_a_gradient() -> None:
    assert public_op("torch.ops.aten.logcumsumexp_backward.default") == "torch.logcumsumexp"
    assert public_op("torch.ops.aten._log_softmax_backward_data.default") == "torch.log_softmax"
    assert is_backward_spelling("torch.ops.aten.logcumsumexp_backward.default")
    assert not is_backward_spelling("torch.ops.aten.logcumsumexp.default")
    assert public_op("torch.ops.aten.not_an_op_backward.default") is None


def test_a_backward_kernel_run_through_two_compile_backends_is_a_compiled_gradient_of_its_forward() -> None:
    # the lighter backend is the reference (Note [The backend under test]); the kernel computes a gradient
    code = """
import torch

def grad_of_softplus(grad_out, x):
    return torch.ops.aten.softplus_backward(grad_out, x, 2.0, 20.0)

g, x = torch.randn(32), torch.randn(32)
a = torch.compile(grad_of_softplus, backend="eager")(g, x)
b = torch.compile(grad_of_softplus)(g, x)
print((a - b).abs().max())
"""
    analysis = analyze_issue("inductor result differs from the eager backend", f"```python\n{code}\n```\n", SILENT)
    pattern = analysis.pattern
    assert pattern is not None
    assert (pattern.kind.value, pattern.api, pattern.test_mode.name) == (
        "Gradient_Mismatch", "torch.nn.functional.softplus", "grad:compile:inductor")


def test_a_title_about_the_callers_incorrect_inputs_does_not_make_a_crash_silent() -> None:
    code = "import torch\ntorch.nn.functional.pad(torch.rand(2), [])\n"
    body = f"Calling it like this kills the interpreter.\n\n```python\n{code}```\n\n```\nSegmentation fault (core dumped)\n```\n"
    analysis = analyze_issue("Segfault in pad with incorrect inputs", body, ["module: crash"])
    assert not analysis.triage.is_silent_bug
    assert analysis.pattern is not None and analysis.pattern.kind.value == "Crash"


def test_a_misspelt_namespace_maps_to_the_op_of_that_name() -> None:
    assert public_op("torch.nn.smooth_l1_loss") == "torch.nn.functional.smooth_l1_loss"


def test_an_nn_module_forward_maps_to_the_op_it_calls() -> None:
    code = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def forward(self, x):
        return torch.special.log_ndtr(x)

net = Net()
x = torch.linspace(-40, 0, 5)
print(net(x), torch.compile(net)(x))
"""
    analysis = analyze_issue("compiled module gives a wrong result", f"```python\n{code}\n```\n", SILENT)
    assert analysis.pattern is not None
    assert analysis.pattern.api == "torch.special.log_ndtr" and analysis.pattern.test_mode.name == "compile:inductor"


def test_a_custom_op_wrapping_a_torch_op_maps_to_that_op() -> None:
    code = """
import torch

@torch.library.custom_op("demo::half_cos", mutates_args=())
def half_cos(x: torch.Tensor) -> torch.Tensor:
    return torch.cos(x) / 2

x = torch.randn(8)
print(half_cos(x), torch.compile(half_cos)(x))
"""
    analysis = analyze_issue("custom op output differs under compile", f"```python\n{code}\n```\n", SILENT)
    assert analysis.pattern is not None and analysis.pattern.api == "torch.cos"


def test_a_func_transform_gives_the_gradient_mode_and_the_op_inside() -> None:
    code = "import torch\nf = lambda x: torch.sinc(x).sum()\nprint(torch.func.jacrev(f)(torch.zeros(3)))"
    analysis = analyze_issue("jacrev of sinc is wrong at zero", f"```python\n{code}\n```\n", [])
    assert analysis.pattern is not None
    assert analysis.pattern.api == "torch.sinc" and analysis.pattern.kind.value == "Gradient_Mismatch"
    assert analysis.pattern.test_mode.name == "grad"


def test_a_nan_gradient_is_a_nan_pattern_that_still_runs_the_gradient() -> None:
    code = "import torch\nf = lambda x: torch.sinc(x).sum()\nprint(torch.func.jacrev(f)(torch.zeros(3)))"
    analysis = analyze_issue("jacrev of sinc is nan at zero", f"```python\n{code}\n```\n", [])
    assert analysis.pattern is not None and analysis.pattern.kind.value == "NaN_Inf"
    assert analysis.pattern.test_mode.name == "grad" and analysis.pattern.oracle.kind.value == "NaNConsistency"


def test_a_nan_named_as_the_expected_value_keeps_the_gradient_kind() -> None:
    code = "import torch\nx = torch.zeros(3, requires_grad=True)\ntorch.nn.functional.normalize(x, dim=0).sum().backward()"
    analysis = analyze_issue("normalize gives a huge gradient at zero instead of nan", f"```python\n{code}\n```\n", [])
    assert analysis.pattern is not None and analysis.pattern.kind.value == "Gradient_Mismatch"


def test_a_nan_between_two_executions_keeps_the_execution_kind() -> None:
    code = "import torch\nx = torch.ones(3)\nprint(torch.compile(torch.log)(x), torch.log(x))"
    analysis = analyze_issue("torch.log under torch.compile returns nan", f"```python\n{code}\n```\n", [])
    assert analysis.pattern is not None and analysis.pattern.kind.value == "Compile_Eager_Mismatch"


def test_a_backward_through_compiled_code_is_a_compiled_gradient_pattern() -> None:
    code = ("import torch\nx = torch.randn(4, requires_grad=True)\ng = torch.compile(lambda t: torch.tanh(t).sum())\n"
            "g(x).backward()\nprint(x.grad)")
    analysis = analyze_issue("wrong gradient of tanh under torch.compile", f"```python\n{code}\n```\n", SILENT)
    assert analysis.pattern is not None and analysis.pattern.kind.value == "Gradient_Mismatch"
    assert analysis.pattern.test_mode.name == "grad:compile:inductor"


def test_an_indexed_write_in_compiled_code_is_index_put() -> None:
    code = ("import torch\n@torch.compile\ndef bump(v, idx):\n    v[idx] += 1\n    return v\n"
            "idx = torch.tensor([0, 2])\nprint(bump(torch.zeros(4), idx))")
    analysis = analyze_issue("compiled indexed add differs from eager", f"```python\n{code}\n```\n", SILENT)
    assert analysis.pattern is not None and analysis.pattern.api == "torch.Tensor.index_put_"


def test_a_cuda_only_report_becomes_a_device_pattern() -> None:
    code = "import torch\nx = torch.randn(64)\nprint(torch.erfinv(x.cuda()).cpu() - torch.erfinv(x))"
    analysis = analyze_issue("erfinv on the GPU returns wrong values", f"```python\n{code}\n```\n", SILENT)
    assert analysis.pattern is not None and analysis.pattern.kind.value == "Device_Mismatch"
    assert analysis.pattern.test_mode.name == "device:cuda" and "device" not in analysis.pattern.test_mode.options


def test_an_mps_report_keeps_its_device() -> None:
    code = "import torch\nx = torch.arange(6.0)\nprint(torch.cumprod(x, 0), torch.cumprod(x.to('mps'), 0).cpu())"
    analysis = analyze_issue("cumprod on mps is wrong", f"```python\n{code}\n```\n", SILENT)
    assert analysis.pattern is not None and analysis.pattern.test_mode.name == "device:cuda"
    assert analysis.pattern.test_mode.options.get("device") == "mps"


def test_a_title_condition_beats_the_device_the_code_ran_on() -> None:
    code = "import torch\nx = torch.randn(8, 4, device='cuda')\nprint(torch.logsumexp(x[:, 1], 0).cpu(), torch.logsumexp(x.cpu()[:, 1], 0))"
    analysis = analyze_issue("logsumexp wrong for non-contiguous input on CUDA", f"```python\n{code}\n```\n", SILENT)
    assert analysis.pattern is not None and analysis.pattern.kind.value == "Layout_Mismatch"
    assert analysis.pattern.test_mode.name == "layout:noncontiguous"
    assert analysis.pattern.test_mode.options.get("device") == "cuda"


def test_an_inplace_write_into_an_expanded_view_is_a_layout_pattern_run_in_place() -> None:
    code = "import torch\nbase = torch.tensor([1.5])\nv = base.expand(3)\nv.exp_()\nprint(base)"
    analysis = analyze_issue("exp_ gives a wrong value", f"```python\n{code}\n```\n", SILENT)
    assert analysis.pattern is not None and analysis.pattern.kind.value == "Layout_Mismatch"
    assert analysis.pattern.test_mode.name == "variant:inplace"


# --------------------------------------------------------------------------- what the title and labels name

def test_an_op_the_title_names_is_the_api_when_the_code_is_cut_off_before_it() -> None:
    body = ("```python\nimport torch\ntorch.set_float32_matmul_precision('highest')\nx = torch.randn(64, 64)\n"
            "y = x.cuda()\nprint(torch.logsumexp(x, 1), ")  # the body ends mid-call
    analysis = analyze_issue("logsumexp gives different results on CPU and GPU", body, SILENT)
    assert analysis.pattern is not None and analysis.pattern.api == "torch.logsumexp"


def test_a_bare_english_word_in_the_title_is_not_an_op_but_a_backticked_one_is() -> None:
    from agent.extract.select import title_ops

    assert title_ops("wrong result in eval mode when sorting") == []
    assert title_ops("`sort` is unstable for float16 input on CUDA") == ["torch.sort"]
    assert title_ops("addcdiv loses precision") == ["torch.addcdiv"]


def test_a_label_names_the_mode_when_neither_code_nor_title_does() -> None:
    code = "import torch\nx = torch.tensor([60000.0, 60000.0])\nprint(torch.hypot(x, x))"
    analysis = analyze_issue("hypot overflows", f"```python\n{code}\n```\n", ["module: half"] + SILENT)
    assert analysis.pattern is not None and analysis.pattern.test_mode.name == "dtype:float16"


def test_a_traceback_ending_in_a_failed_assertion_is_a_check_not_a_crash() -> None:
    from agent.extract.text import _raised

    failed_check = "traceback (most recent call last):\n  file \"r.py\", line 9\nassertionerror: tensor-likes are not close!"
    assert not _raised(failed_check)
    assert _raised("traceback (most recent call last):\n  file \"r.py\", line 9\nruntimeerror: shape mismatch")


def test_float_noise_words_dismiss_only_beside_a_dismissal() -> None:
    from agent.extract.verdicts import read_verdict

    assert not read_verdict(["Looks like a numerical error in the vectorized kernel; looking into it."]).dismissed
    noise = read_verdict(["These differences are expected from floating point rounding, see the numerical accuracy notes."])
    assert noise.dismissed and noise.false_alarm_class == "float_noise"


def test_a_transposed_view_in_a_report_about_strides_is_a_layout_pattern() -> None:
    code = "import torch\na = torch.randn(6, 4)\nprint(torch.cummax(a.t(), 1).values, torch.cummax(a.t().clone(), 1).values)"
    analysis = analyze_issue("cummax ignores the strides of a transposed input", f"```python\n{code}\n```\n", SILENT)
    assert analysis.pattern is not None and analysis.pattern.test_mode.name == "layout:noncontiguous"


def test_an_in_place_spelling_under_the_in_place_mode_names_its_plain_op() -> None:
    # the variant:inplace mode adds the underscore itself: Tensor.mul_ has no in-place variant of its own
    assert api_for_mode("torch.Tensor.mul_", "variant:inplace") == "torch.mul"
    assert api_for_mode("torch.Tensor.mul_", "compile:inductor") == "torch.Tensor.mul_"
    assert api_for_mode("torch.Tensor.__iadd__", "variant:inplace") == "torch.Tensor.__iadd__"
    assert api_for_mode("torch.mul", "variant:inplace") == "torch.mul"
    assert api_for_mode("torch.Tensor.mul", "variant:inplace") == "torch.mul"  # one op, one harness
    assert api_for_mode("torch.Tensor.index_fill_", "variant:inplace") == "torch.index_fill"


def test_a_pattern_about_an_in_place_method_on_a_view_of_itself_names_the_plain_op() -> None:
    code = "import torch\nw = torch.arange(16.).reshape(4, 4)\nw.mul_(w.t())\nprint(w)\n"
    analysis = analyze_issue("mul_ with the transpose of the same tensor gives wrong values",
                             f"```python\n{code}\n```\n", SILENT)
    assert analysis.pattern is not None
    assert (analysis.pattern.api, analysis.pattern.test_mode.name) == ("torch.mul", "variant:inplace")


def test_comments_rendered_after_a_plain_description_keep_the_description() -> None:
    body = ("Cummax gives the wrong index on ties.\n\n```python\nimport torch\nprint(torch.cummax(torch.ones(3), 0))\n```"
            "\n\n---\ncarol · comment · 2024-05-02\nI see it too.\n\n"
            "dave · comment · 2024-05-03\nFixed by the linked PR.\n")
    thread = split_thread(body)
    assert thread.description.startswith("Cummax gives the wrong index on ties.")
    assert thread.description.endswith("```")
    assert [c.author for c in thread.comments] == ["carol", "dave"]


def test_a_reduced_repro_in_a_comment_names_the_api_the_description_code_does_not() -> None:
    body = ("## Bug\nMy detector gives different outputs once its input is channels_last.\n\n```python\n"
            "import torch\nfrom detlib import build_detector\nnet = build_detector('big').eval()\n"
            "x = torch.randn(2, 3, 32, 32)\nprint((net(x) - net(x.contiguous(memory_format=torch.channels_last)))"
            ".abs().max())\n```\n\n"
            "erin · comment · 2024-06-01\nNarrowed it down to one layer:\n\n```python\nimport torch\n"
            "m = torch.nn.GroupNorm(4, 16).eval()\nx = torch.randn(2, 16, 8, 8)\n"
            "print((m(x) - m(x.contiguous(memory_format=torch.channels_last))).abs().max())\n```\n")
    analysis = analyze_issue("Detector output changes with channels_last input", body, [])
    assert analysis.pattern is not None
    assert analysis.pattern.api == "torch.nn.GroupNorm"
    assert analysis.pattern.test_mode.name == "layout:channels_last"


def test_a_confirmed_report_whose_repro_only_raises_is_not_silent() -> None:
    body = ("Backward through a permuted input breaks:\n\n```python\nimport torch\n"
            "x = torch.randn(2, 3, 4, requires_grad=True).permute(0, 2, 1)\n"
            "torch.nn.functional.conv1d(x, torch.randn(5, 4, 2)).sum().backward()\n```\n\n"
            "Running it gives:\n\n```\n  File \"conv.py\", line 12, in view\nValueError: input must be contiguous\n```\n\n"
            "frank · comment · 2017-03-01\nThis is fixed in master.\n")
    analysis = analyze_issue("permute() then conv1d breaks the backward pass", body, ["high priority"])
    assert not analysis.triage.is_silent_bug
