"""Shapes of real reports the analyzer used to lose, each written for these tests in our own words.

IPython sessions, output pasted inside the code fence, old snippets with no import and a Python 2 print,
values read from a tie-sensitive op, titles that say "miscompile" or name the op's input builder first.
"""

from __future__ import annotations

import ast

from agent.extract.analyzer import analyze_issue
from agent.extract.codeblocks import code_blocks, unfenced_code
from agent.extract.scan import scan_tree
from agent.extract.text import without_code


def _fenced(code: str, prose: str = "") -> str:
    return f"{prose}\n\n```\n{code}\n```\n"


def test_an_ipython_session_is_read_as_its_input_lines() -> None:
    session = ("In [1]: import torch\n\nIn [2]: y = torch.empty(4, 2).t()\n\nIn [3]: torch.ceil(torch.arange(8.),\n"
               "   ...:            out=y)\nOut[3]:\ntensor([[0.5, 0.25],\n        [0.75, 0.1]])\n")
    [block] = code_blocks(_fenced(session))
    assert block.is_python
    assert "out=y" in block.text and "Out[3]" not in block.text and "0.25" not in block.text


def test_output_pasted_inside_the_fence_is_dropped_in_one_piece() -> None:
    lines = "\n".join("    7     7     7  ...      7     7     7" for _ in range(12))
    code = f"import torch\nacc = torch.zeros(64, 64)\nacc.mul_(torch.ones(64, 64))\nprint(acc)\n\n{lines}\n[torch.FloatTensor of size 64x64]\n"
    [block] = code_blocks(_fenced(code))
    assert block.is_python and "acc.mul_" in block.text and "FloatTensor of size" not in block.text


def test_a_snippet_without_imports_and_with_a_python2_print_still_parses() -> None:
    code = "w = torch.rand(4, 4)[:, ::2]\nm = nn.Linear(2, 4)\nm.weight.data = w\nprint m(torch.ones(1, 2))\n"
    [block] = code_blocks(_fenced(code))
    assert block.is_python and block.tree is not None


def test_a_code_line_after_bad_output_is_kept() -> None:
    code = "import torch\nx = torch.ones(3)\n1 1 1\ny = torch.cumsum(x, 0)\n"
    [block] = code_blocks(_fenced(code))
    assert "torch.cumsum" in block.text


def test_an_op_whose_values_alone_are_read_is_not_a_tie_false_alarm() -> None:
    code = "import torch\nx = torch.full((4, 4), float('-inf')).cuda()\nprint(x.max(1)[0])\n"
    a = analyze_issue("max of a row of -inf is finite on cuda", _fenced(code, "The result is not -inf."), [])
    assert a.triage.false_alarm_class is None and a.triage.is_silent_bug


def test_the_indices_of_a_tied_op_are_still_a_tie_false_alarm() -> None:
    code = "import torch\nx = torch.ones(4, 4).cuda()\nprint(x.max(1)[1], x.cpu().max(1)[1])\n"
    a = analyze_issue("max indices differ on cuda", _fenced(code, "The indices differ."), [])
    assert a.triage.false_alarm_class == "ties"


def test_miscompile_in_the_title_is_the_symptom() -> None:
    code = ("import torch\n\ndef f(x):\n    return torch.cumsum(x, 0)[1:]\n\nx = torch.randn(64)\n"
            "print(torch.compile(f)(x))\nprint(f(x))\n")
    a = analyze_issue("[inductor] miscompile of cumsum followed by a slice", _fenced(code), ["oncall: pt2"])
    assert a.triage.is_silent_bug and a.pattern is not None and a.pattern.api == "torch.cumsum"


def test_the_op_a_title_names_wins_over_the_input_builder_it_spells_first() -> None:
    code = "import torch\nprint(torch.tensor(float('inf')).cuda().amin())\n"
    a = analyze_issue("torch.tensor(float('inf')).cuda().amin() is not inf", _fenced(code, "It prints a finite value."), [])
    assert a.pattern is not None and a.pattern.api == "torch.amin"


def test_a_title_about_the_out_parameter_makes_an_out_variant_pattern() -> None:
    code = "import torch\nx = torch.rand(8, dtype=torch.float16)\nres = torch.empty((), dtype=torch.float16)\ntorch.amax(x, 0, out=res)\nprint(res)\n"
    a = analyze_issue("amax with the out parameter leaves the given tensor unchanged",
                      _fenced(code, "The out tensor still holds garbage."), ["module: correctness (silent)"])
    assert a.pattern is not None and a.pattern.test_mode.name == "variant:out"


def test_gradcheck_in_single_precision_is_a_low_precision_false_alarm() -> None:
    code = ("import torch\nfrom torch.autograd import gradcheck\nx = torch.rand(1, 3, requires_grad=True)\n"
            "print(gradcheck(torch.nn.Linear(3, 1), (x,), eps=1e-6, atol=1e-4))\n")
    a = analyze_issue("wrong autograd gradient for a linear layer", _fenced(code, "gradcheck fails."), [])
    assert a.triage.false_alarm_class == "low_precision" and not a.triage.is_silent_bug


def test_gradcheck_in_double_precision_is_not_dismissed() -> None:
    code = ("import torch\nfrom torch.autograd import gradcheck\nx = torch.rand(1, 3, dtype=torch.float64, requires_grad=True)\n"
            "print(gradcheck(torch.special.i1e, (x,)))\n")
    a = analyze_issue("gradcheck fails for i1e", _fenced(code, "The analytical gradient is wrong."), [])
    assert a.triage.false_alarm_class is None and a.triage.is_silent_bug


def test_repeated_values_of_a_typed_constructor_are_ties() -> None:
    code = "import torch\nx = torch.LongTensor([3, 3, 3, 3])\nprint(x.topk(1), x.cuda().topk(1))\n"
    a = analyze_issue("topk returns a different index on cuda", _fenced(code, "The index differs."), [])
    assert a.triage.false_alarm_class == "ties"


def test_a_confirmed_crash_is_still_not_a_silent_bug() -> None:
    code = "import torch\nx = torch.empty(0, 4, dtype=torch.float16)\ntorch.remainder(x, x[:0])\n"
    a = analyze_issue("`torch.remainder` on empty inputs causes a segmentation fault", _fenced(code),
                      ["high priority", "module: crash"])
    assert not a.triage.is_silent_bug and a.triage.reason.startswith("a crash")


def test_gradcheck_on_complex128_inputs_is_double_precision() -> None:
    code = ("import torch\nx = torch.randn(3, dtype=torch.complex128, requires_grad=True)\n"
            "print(torch.autograd.gradcheck(torch.sgn, (x,)))\n")
    a = analyze_issue("gradcheck fails for sgn on complex inputs", _fenced(code, "The gradient is wrong."), [])
    assert a.triage.false_alarm_class is None


def test_printing_an_equality_of_two_results_shows_the_comparison() -> None:
    code = ("import torch\n\n@torch.jit.script\ndef f(a, b):\n    one = 2 * (a | b)\n    other = 2 * a + 2 * b\n"
            "    print(one == other)\n\nf(torch.zeros(4, dtype=torch.bool), torch.ones(4, dtype=torch.bool))\n")
    a = analyze_issue("scripted boolean arithmetic", _fenced(code), [])
    assert a.triage.is_silent_bug and a.pattern is not None and a.pattern.test_mode.name == "jit.script"


def test_words_in_the_repros_comments_count_as_the_reporters_words() -> None:
    code = ("import torch\nx = torch.tensor([[3, 1], [3, 1]])\n"
            "torch.bincount(x[:, 1])  # wrong, should be [0, 2]\ntorch.bincount(x[:, 1].contiguous())\n")
    title = "bincount on a non-contiguous column view"
    assert not analyze_issue(title, _fenced(code.replace("# wrong, should be [0, 2]", ""), "## To Reproduce"),
                             []).triage.is_silent_bug  # the same report without its comment shows nothing
    a = analyze_issue(title, _fenced(code, "## To Reproduce"), [])
    assert a.triage.is_silent_bug and a.pattern is not None and a.pattern.api == "torch.bincount"


def test_an_op_called_only_inside_print_is_still_the_api() -> None:
    code = "import torch\nx = torch.arange(4.0).reshape(2, 2)\ny = torch.empty(2, 2).t()\nprint(torch.expm1(x, out=y))\n"
    a = analyze_issue("unary ops write the wrong elements when out is transposed", _fenced(code, "The values are swapped."),
                      ["module: correctness (silent)"])
    assert a.pattern is not None and a.pattern.api == "torch.expm1"


def test_a_name_rebound_from_an_int_to_a_tensor_takes_part_in_arithmetic() -> None:
    code = "import torch\nn = 40000019\nk = 17\nn = torch.as_tensor(n, device='mps')\nprint((n % k).item())\n"
    a = analyze_issue("modulo of a large int tensor is wrong on mps", _fenced(code, "It prints 4, not 2."),
                      ["module: correctness (silent)"])
    assert a.pattern is not None and a.pattern.api == "torch.remainder"


def test_a_device_named_once_and_passed_on_is_the_device_the_report_ran_on() -> None:
    code = ('import torch\nwhere = "cuda"\nx = torch.rand(4, 8, 8).to(device=where)\n'
            'y = torch.fft.ifftn(x, dim=(-2, -1))\nprint((y - y[0:1]).abs().max())\n')
    a = analyze_issue("ifftn of identical slices differs on one GPU", _fenced(code, "Every slice should match."),
                      ["module: correctness (silent)"])
    assert a.facts.cuda and a.facts.devices == ["cuda"]
    assert a.pattern is not None and a.pattern.test_mode.name == "device:cuda" and a.pattern.api == "torch.fft.ifftn"


def test_a_device_name_rebound_to_the_cpu_is_not_an_accelerator() -> None:
    code = 'import torch\nwhere = "cuda"\nwhere = "cpu"\nx = torch.rand(4).to(where)\nprint(torch.exp(x))\n'
    a = analyze_issue("exp is off", _fenced(code), [])
    assert not a.facts.cuda


def test_a_title_word_for_the_family_of_the_module_the_code_runs_names_that_module() -> None:
    code = ("import torch\nm = torch.nn.Conv1d(1, 8, 3)\nx = torch.randn(2, 1, 40)\nref = m(x)\n"
            "m.to(memory_format=torch.channels_last)\nprint((m(x) - ref).abs().max())\n")
    a = analyze_issue("convolution gives a different answer after a memory format change", _fenced(code), [])
    assert a.pattern is not None and a.pattern.api == "torch.nn.Conv1d"


def test_channel_last_in_the_singular_is_a_layout_report() -> None:
    code = ("import torch\nbn = torch.nn.BatchNorm2d(8).eval().half()\nx = torch.randn(2, 8, 6, 6).half()\n"
            "a = bn(x)\nb = bn(x.contiguous(memory_format=torch.channels_last))\nprint((a - b).abs().max())\n")
    a = analyze_issue("BatchNorm2d is wrong when given a channel last tensor", _fenced(code), [])
    assert a.pattern is not None and a.pattern.test_mode.name == "layout:channels_last"



def test_the_trace_op_in_backticks_is_not_tracing() -> None:
    code = ('import torch\nx = torch.rand(64, 64, device="mps")\nfirst = torch.trace(x)\n'
            'for _ in range(1000):\n    assert torch.trace(x) == first\n')
    a = analyze_issue("[MPS] `sum` and `trace` change between identical calls", _fenced(code),
                      ["module: correctness (silent)"])
    assert a.pattern is not None and a.pattern.kind.value == "Device_Mismatch"
    assert a.pattern.test_mode.options.get("device") == "mps"


def test_a_traced_module_in_the_title_is_still_tracing() -> None:
    code = "import torch\nm = torch.nn.Linear(3, 3)\nt = torch.jit.trace(m, torch.ones(1, 3))\nprint(t(torch.ones(2, 3)) - m(torch.ones(2, 3)))\n"
    a = analyze_issue("traced Linear gives another answer", _fenced(code), [])
    assert a.pattern is not None and a.pattern.test_mode.name == "jit.trace"


def test_a_title_with_a_crash_and_a_wrong_result_is_about_the_wrong_result() -> None:
    code = "import torch\nx = torch.full((40, 60), 2.5)\nm = torch.ones(40, 60, dtype=torch.uint8)\nx[1:, 1:] *= m[1:, 1:]\nprint((x != 2.5).sum())\n"
    a = analyze_issue("sliced in-place multiply segfaults or silently drops values", _fenced(code, "Sometimes a segfault."), [])
    assert a.triage.reason != "a crash, not a silent wrong result"


def test_a_crash_on_a_nan_input_is_still_a_crash() -> None:
    code = "import torch\nx = torch.tensor([float('nan'), 1.0])\ntorch.histc(x, bins=4)\n"
    a = analyze_issue("histc segfaults on NaN input", _fenced(code, "Segmentation fault (core dumped)"), [])
    assert a.triage.reason == "a crash, not a silent wrong result" and not a.triage.is_silent_bug


def test_an_out_tensor_that_is_a_strided_view_is_a_layout_report() -> None:
    code = ("import torch\nx = torch.arange(10.)\nres = torch.zeros(20)\n"
            "torch.cummax(x, 0, out=(res[::2], torch.zeros(10, dtype=torch.long)))\nprint(res)\n")
    a = analyze_issue("cummax ignores the strides of its out tensor", _fenced(code, "The out tensor is non-contiguous."), [])
    assert a.pattern is not None and a.pattern.test_mode.name == "variant:out"
    assert a.pattern.kind.value == "Layout_Mismatch"


def test_a_packed_out_tensor_stays_a_variant_report() -> None:
    code = "import torch\nx = torch.rand(6)\nbuf = torch.empty(6)\ntorch.exp(x, out=buf)\nprint(buf - torch.exp(x))\n"
    a = analyze_issue("exp with an out tensor differs", _fenced(code, "The out argument gives other values."), [])
    assert a.pattern is not None and a.pattern.kind.value == "Variant_Mismatch"


def test_a_script_whose_pasted_output_starts_with_a_prompt_marker_is_the_script() -> None:
    code = ("import torch\n\ndef largest_prefix_sum(t):\n    return torch.cumprod(t, dim=0).max()\n\n"
            "t = torch.ones(4096, 3)\nprint(\">>> largest: %f\" % largest_prefix_sum(t))\n\n>>> largest: 7.000000\n")
    [block] = code_blocks(_fenced(code))
    assert block.is_python and not block.session
    assert "torch.cumprod" in block.text and ">>> largest: 7" not in block.text


def test_a_fenced_block_inside_a_list_item_is_dedented_and_parsed() -> None:
    body = ("Steps:\n\n- first run this\n\n    ```python\n    import torch\n    w = torch.ones(3, 3)\n"
            "    print(w.cumsum(0))\n    ```\n")
    [block] = code_blocks(body)
    assert block.is_python and block.text.startswith("import torch")


def test_a_line_with_a_forgotten_closing_bracket_is_closed_not_dropped() -> None:
    code = ("import torch\nv = torch.arange(6.)\nprint(v.flip(0)\n# tensor([5., 4., 3., 2., 1., 0.])\n"
            "print(torch.jit.script(lambda t: t.flip(0))(v))\n")
    [block] = code_blocks(_fenced(code))
    assert block.is_python and "print(v.flip(0))" in block.text


def test_a_bracket_left_open_across_lines_is_not_closed_early() -> None:
    # the call spans two lines: closing the first line would change what the code says, so the parser's
    # own answer (the block parses as written) stands
    code = "import torch\ny = torch.cat([torch.ones(2),\n               torch.zeros(2)])\nprint(y)\n"
    [block] = code_blocks(_fenced(code))
    assert block.is_python and block.text.strip() == code.strip()


def _pattern(title: str, code: str, labels: list[str]):
    """The pattern of a report whose body is `code` in one fence, under the tracker `labels`."""
    return analyze_issue(title, _fenced(code), labels).pattern


def test_ints_summed_in_a_comprehension_over_range_are_not_a_tensor_operator() -> None:
    code = ("import torch\nm = torch.tensor([[r * 10 + c for c in range(4)] for r in range(5)])\n"
            "m -= m[:1]\nprint(m)\n")
    pattern = _pattern("in-place subtraction of the first row gives wrong rows", code,
                       ["module: correctness (silent)"])
    assert pattern is not None and pattern.api == "torch.sub"


def test_a_column_view_against_its_clone_is_a_noncontiguous_layout_report() -> None:
    # Note [Layout without words]: x[:, 1] is a column (its elements a row apart); .clone() packs it
    code = ("import torch\ng = torch.rand(6, 6)\ncol = g[:, 1]\nprint(torch.cummax(col, 0))\n"
            "print(torch.cummax(g[:, 1].clone(), 0))\n")
    pattern = _pattern("cummax gives a different index for the same values", code, ["high priority"])
    assert pattern is not None
    assert (pattern.kind.value, pattern.test_mode.name) == ("Layout_Mismatch", "layout:noncontiguous")


def test_a_row_view_is_not_a_strided_layout() -> None:
    code = "import torch\ng = torch.rand(6, 6)\nprint(torch.cummax(g[1, :].clone(), 0))\n"
    pattern = _pattern("cummax gives a different index for the same values", code, ["high priority"])
    assert pattern is None or pattern.test_mode.name != "layout:noncontiguous"


def test_an_op_the_title_spells_with_its_submodule_is_named_even_when_its_name_is_english() -> None:
    code = ("import torch\nm = torch.rand(3, 3, dtype=torch.float64, requires_grad=True)\nm.sum().backward()\n"
            "print(m.grad)\n")
    pattern = _pattern("second derivative of `linalg.solve` is silently wrong", code,
                       ["module: correctness (silent)"])
    assert pattern is not None and pattern.api == "torch.linalg.solve"


def test_a_title_about_in_place_ops_makes_the_in_place_method_the_subject() -> None:
    code = ("import torch\nimport torch.nn as nn\nproj = nn.Linear(8, 4)\nh = proj(torch.randn(5, 8))\n"
            "g = h.t()\ng.exp_()\nprint(h)\n")
    analysis = analyze_issue("in-place functions give values that differ from the out-of-place ones", _fenced(code),
                             ["high priority"])
    assert analysis.api_candidates[0][0] == "torch.Tensor.exp_"
    # the pattern names the plain op: its in-place mode runs exp_ (api_for_mode)
    assert analysis.pattern is not None and analysis.pattern.api == "torch.exp"


def test_an_in_place_write_into_a_slice_that_reads_another_slice_of_it_is_a_layout_report() -> None:
    # Note [Writes into repeating views]: the receiver is itself a view (r[2:]), the operand another view of r
    code = "import torch\nr = torch.arange(12)\nprint(r[2:].add_(r[:-2]))\n"
    pattern = _pattern("running add_ on a shifted slice of the same tensor", code, ["module: correctness (silent)"])
    assert pattern is not None
    assert (pattern.kind.value, pattern.api, pattern.test_mode.name) == (
        "Layout_Mismatch", "torch.add", "variant:inplace")


def test_an_in_place_write_that_reads_the_slice_it_writes_does_not_overlap() -> None:
    code = "import torch\nr = torch.arange(12.)\nprint(r[2:].mul_(r[2:]))\n"
    pattern = _pattern("squaring a slice in place loses precision", code, ["module: correctness (silent)"])
    assert pattern is None or pattern.kind.value != "Layout_Mismatch"


def test_an_augmented_write_into_a_slice_from_a_shifted_slice_is_a_layout_report() -> None:
    # ``r[1:] += r[:-1]`` runs ``r[1:].add_(r[:-1])``: the same overlap, spelled as an augmented assignment
    code = "import torch\nr = torch.arange(10.)\nr[1:] += r[:-1]\nprint(r)\n"
    pattern = _pattern("running sum written in place over a slice comes out wrong", code,
                       ["module: correctness (silent)"])
    assert pattern is not None
    assert (pattern.kind.value, pattern.api, pattern.test_mode.name) == (
        "Layout_Mismatch", "torch.add", "variant:inplace")


def test_an_augmented_write_between_two_rows_of_one_tensor_does_not_overlap() -> None:
    facts = scan_tree(ast.parse("import torch\nm = torch.ones(3, 3)\nm[0] += m[1]\n"))
    assert not facts.inplace_overlaps


def test_a_python_one_liner_in_a_shell_block_is_the_repro() -> None:
    body = ("The mean differs by device.\n\n```\n$ python3 -c \"import torch; v=torch.linspace(0, 1, 9); "
            "print(v.std().item(), v.to('mps').std().item())\"\n0.2846 0.2683\n```\n")
    blocks = [b for b in code_blocks(body) if b.is_python]
    assert len(blocks) == 1 and blocks[0].text.startswith("import torch; v=torch.linspace")
    pattern = analyze_issue("`std` result on MPS differs from the CPU", body, ["module: mps"]).pattern
    assert pattern is not None and (pattern.api, pattern.test_mode.name) == ("torch.std", "device:cuda")


def test_a_shell_line_without_python_c_gives_no_code() -> None:
    body = "```\n$ pip install torch==2.1 -c constraints.txt\n$ python -m pip list | grep torch\n```\n"
    assert not any(b.is_python for b in code_blocks(body))


def test_a_title_that_applies_an_operator_to_built_tensors_names_the_operator() -> None:
    code = ("import torch\na = torch.tensor([3e-3], dtype=torch.bfloat16)\nb = torch.tensor(1e6)\n"
            "print(a / b)\n")
    pattern = _pattern("torch.tensor([3e-3], dtype=torch.bfloat16) / torch.tensor(1e6) rounds to zero", code,
                       ["module: bfloat16"])
    assert pattern is not None and pattern.api == "torch.div"


def test_a_dtype_conversion_whose_name_the_title_carries_is_not_the_op() -> None:
    # "half" in the title names the dtype the reduction runs in; .half() only converts the input
    code = ("import torch\nv = torch.full((6,), 30000.0).half()\nprint(v.cumsum(0))\n"
            "print(v.float().cumsum(0))\n")
    pattern = _pattern("cumulative sums of half tensors overflow", code, ["module: half"])
    assert pattern is not None and pattern.api == "torch.cumsum"


def test_a_session_pasted_as_an_indented_block_is_read() -> None:
    body = ("Subtracting the first element in place gives odd numbers:\n\n"
            "    >>> v = torch.Tensor([4, 5, 6])\n    >>> v -= v[0]\n    >>> v\n    tensor([0., 5., 6.])\n\n"
            "I expected every element to change.\n")
    [block] = [b for b in code_blocks(body) + unfenced_code(body) if b.is_python]
    assert block.session and block.text.splitlines()[:2] == ["v = torch.Tensor([4, 5, 6])", "v -= v[0]"]
    pattern = analyze_issue("in-place subtraction of one element gives odd values", body, []).pattern
    assert pattern is not None and (pattern.api, pattern.test_mode.name) == ("torch.sub", "variant:inplace")


def test_an_indented_block_of_output_is_not_a_session() -> None:
    body = "The output:\n\n    tensor([0., 5., 6.])\n    >>> nothing after this prompt\n"
    assert not unfenced_code(body)


def test_bare_torch_lines_with_their_output_and_no_fence_are_the_repro() -> None:
    body = ("when I run\ntorch.arange(6).short().cuda().prod()\nit prints\n 0\n"
            "and\ntorch.arange(1, 6).short().cuda().prod()\n 120\n\nThe first one should be 0 and is.\n")
    [block] = unfenced_code(body)
    assert block.session and block.text.splitlines()[1:] == [
        "torch.arange(6).short().cuda().prod()", "torch.arange(1, 6).short().cuda().prod()"]
    pattern = analyze_issue("prod of short tensors on the GPU is wrong", body, []).pattern
    assert pattern is not None and (pattern.api, pattern.test_mode.name) == ("torch.prod", "device:cuda")


def test_bare_lines_that_go_on_with_a_torch_lines_values_are_part_of_the_repro() -> None:
    # Note [A bare repro goes on past its torch lines]: only the first line spells torch
    body = ("Backprop through a cube root gives a bad value at zero.\n\nw = torch.zeros(3, requires_grad=True)\n"
            "total = (w ** (1 / 3)).sum()\n\ntotal.backward()\nprint(w.grad)\n\ntensor(0.)\n"
            "tensor([nan, nan, nan])\n\nIt should not be that.\nthanks\n")
    [block] = unfenced_code(body)
    assert block.session and block.text.splitlines()[1:] == [
        "w = torch.zeros(3, requires_grad=True)", "total = (w ** (1 / 3)).sum()", "total.backward()",
        "print(w.grad)"]


def test_a_line_that_reads_a_name_the_bare_repro_never_bound_ends_it() -> None:
    body = "a = torch.ones(2)\nb = a.cumsum(0)\nresult(b)\nc = b * 2\n"
    [block] = unfenced_code(body)
    assert block.text.splitlines()[1:] == ["a = torch.ones(2)", "b = a.cumsum(0)"]


def test_a_whole_torch_call_typed_as_inline_code_is_the_repro() -> None:
    body = ("`torch.ones(4, 4).cuda().cumprod(1).sum()` gives 4 here but `torch.ones(4, 4).cumprod(1).sum()` "
            "gives 16, which is right.\n")
    [block] = unfenced_code(body)
    assert block.session and block.text.splitlines()[1:] == [
        "torch.ones(4, 4).cuda().cumprod(1).sum()", "torch.ones(4, 4).cumprod(1).sum()"]
    pattern = analyze_issue("cumprod on the GPU loses the running product", body, []).pattern
    assert pattern is not None and pattern.test_mode.name == "device:cuda"


def test_inline_code_naming_the_reporters_own_objects_is_a_mention_not_code() -> None:
    body = "After `torch.compile(model)` and `torch.nn.functional.gelu(x)` the loss drifts from eager.\n"
    assert unfenced_code(body) == []


def test_a_sentence_that_starts_with_a_torch_call_is_not_code() -> None:
    body = "torch.compile(model) gives a different loss than eager after a few steps.\n"
    assert unfenced_code(body) == []


def test_of_two_ops_the_title_names_the_one_the_code_runs_by_operator_comes_first() -> None:
    code = ("import torch\ndef halve(v):\n    return v / 2.0\nv = torch.tensor([1.0, 3.0])\nprint(halve(v))\n"
            "print(halve(v.to('mps')))\n")
    pattern = _pattern("[MPS] `mul` and `div` round their results", code, ["module: mps"])
    assert pattern is not None and pattern.api == "torch.div"


def test_a_title_that_spells_the_op_as_its_module_name_names_the_functional_the_code_calls() -> None:
    # "GroupNorm" in the title, F.group_norm in the code: one op family; "nonzero" is an adjective here
    code = ("import torch\nimport torch.nn.functional as F\nx = torch.full((2, 4, 3), 7.0)\n"
            "w = torch.ones(4, requires_grad=True)\nF.group_norm(x, 4, w).sum().backward()\nprint(w.grad)\n")
    analysis = analyze_issue("GroupNorm with one channel per group gives a nonzero weight gradient", _fenced(code),
                             ["module: correctness (silent)"])
    assert analysis.api_candidates[0][0] == "torch.nn.functional.group_norm"


def test_code_in_a_fence_left_open_is_not_the_reporters_words() -> None:
    # the body is cut off inside its repro: its import of autograd must not read as a report about gradients
    body = ("The indices returned by `torch.min` over dim 1 are out of range for 4-d inputs.\n\n```python\n"
            "import torch\nfrom torch.autograd import Variable\nt = torch.randn(2, 3, 4, 5)\n"
            "vals, idx = torch.min(t, 1)\nassert idx.max() < 3\n")
    analysis = analyze_issue("min over a middle dimension gives out-of-range indices", body, ["high priority"])
    assert analysis.pattern is None or analysis.pattern.test_mode.name != "grad"
    assert "autograd" not in without_code(body)


def test_a_title_calling_the_input_discontiguous_names_the_layout_over_the_device() -> None:
    code = ("import torch\nx = torch.randn(5, 5).cuda()\nprint(x.diagonal().amax(-1))\n"
            "print(x.diagonal().clone().amax(-1))\n")
    pattern = _pattern("amax on the GPU is wrong for discontiguous tensors", code, ["module: correctness (silent)"])
    assert pattern is not None and pattern.test_mode.name == "layout:noncontiguous"


def test_lines_typed_each_as_inline_code_are_one_repro() -> None:
    body = ("On the GPU the row keeps its length:\n`E = torch.nn.Embedding(4, 3, max_norm=1.0).cuda()`\n"
            "`idx = torch.tensor([[2]]).cuda()`\n`E(idx)`\n`print(E.weight[2].norm())`\nThe CPU renormalizes it.\n")
    [block] = unfenced_code(body)
    assert block.text.splitlines() == ["E = torch.nn.Embedding(4, 3, max_norm=1.0).cuda()",
                                       "idx = torch.tensor([[2]]).cuda()", "E(idx)", "print(E.weight[2].norm())"]
    pattern = analyze_issue("embedding renorm is skipped on the GPU", body, ["high priority"]).pattern
    assert pattern is not None and (pattern.api, pattern.test_mode.name) == ("torch.nn.Embedding", "device:cuda")


def test_torch_compiled_from_source_is_not_a_compile_report() -> None:
    code = "import torch\nx = torch.rand(6).cuda()\nprint(torch.cumprod(x, 0))\nprint(torch.cumprod(x.cpu(), 0))\n"
    body = _fenced(code) + "\nI use a build compiled from source, compiled with cuda 12.\n"
    pattern = analyze_issue("cumprod differs on the GPU", body, ["high priority"]).pattern
    assert pattern is not None and pattern.test_mode.name == "device:cuda"


def test_torch_printing_inf_from_finite_inputs_is_a_non_finite_report() -> None:
    body = ("With ceil_mode the last window falls outside the input:\n\n```\n>>> x = torch.randn(1, 1, 5)\n"
            ">>> torch.nn.functional.max_pool1d(x, 1, stride=2, ceil_mode=True)\n"
            "tensor([[[ 0.3100, -1.2000, -inf]]])\n```\n")
    pattern = analyze_issue("max_pool1d with ceil_mode reads past the end", body, ["high priority"]).pattern
    assert pattern is not None and (pattern.kind.value, pattern.api) == ("NaN_Inf", "torch.nn.functional.max_pool1d")


# --------------------------------------------------------------------------- inline code typed with three backticks

def test_a_sentence_starting_with_triple_backtick_code_is_not_a_fence() -> None:
    body = ("```out``` holds ```tensor([2., 2.])``` after the call.\n\n"
            "```python\nimport torch\nout = torch.cumsum(torch.ones(2), 0)\nprint(out)\n```\n")
    blocks = code_blocks(body)
    assert [b.is_python for b in blocks] == [True]
    assert "torch.cumsum" in blocks[0].text


def test_an_op_named_in_triple_backtick_inline_code_is_read_as_prose() -> None:
    body = ("### Describe the bug\n\nOn the MPS backend a boolean mask picks the wrong elements of a 2-D tensor:\n\n"
            "```python\nimport torch\nvals = torch.arange(12).reshape(3, 4).to('mps')\n"
            "keep = (torch.arange(12).reshape(3, 4) % 3 == 0).to('mps')\nprint(vals[keep])\n```\n\n"
            "```vals[keep]``` gives ```tensor([9, 3, 6, 9])```, but on the CPU it is ```tensor([0, 3, 6, 9])```. "
            "```torch.masked_select``` returns the same wrong values.\n")
    analysis = analyze_issue("Boolean mask indexing returns wrong elements on MPS", body, ["module: mps"])
    assert analysis.pattern is not None
    assert analysis.pattern.api == "torch.masked_select"
    assert "```" in without_code(body) and "torch.masked_select" in without_code(body)
