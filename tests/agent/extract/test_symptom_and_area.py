"""What a report's own words say about its symptom and its area, beside what its code runs.

Reports written for these tests, in our own words: one side of a pair raising while the other succeeds
(Note [One side raises], modes.py), a report that only ran on an accelerator but is about a compiler
(Note [Device-only reports]), arithmetic through augmented assignment, and an in-place method named bare
in a title.
"""

from __future__ import annotations

import pytest

from agent.extract.analyzer import analyze_issue
from agent.extract.modes import one_side_raises
from agent.patterns import OracleKind, PatternKind

INPLACE_RAISES = """With an input whose shape cannot broadcast, the functional `addmm` raises an error while the
in-place `addmm_` succeeds and returns a tensor.

```python
import torch
acc = torch.rand(3, 5, 0)
a, b = torch.rand(3, 4), torch.rand(4, 5)
torch.addmm(acc.clone(), a, b)
acc.clone().addmm_(a, b)
```
"""

INPLACE_WRONG = """No error is raised, but the in-place `addcdiv_` writes values that differ from `addcdiv`.

```python
import torch
t, a, b = torch.rand(8), torch.rand(8), torch.rand(8) + 1
print(torch.addcdiv(t, a, b), t.clone().addcdiv_(a, b))
```
"""


def test_one_side_raising_is_an_exception_mismatch_on_the_compared_pair() -> None:
    pattern = analyze_issue("addmm_ accepts an input that addmm rejects", INPLACE_RAISES, []).pattern
    assert pattern is not None
    assert (pattern.kind, pattern.test_mode.name) == (PatternKind.Exception_Mismatch, "variant:inplace")
    assert pattern.oracle.kind == OracleKind.ExceptionConsistency


def test_a_pasted_error_line_and_a_run_that_worked_fine_is_one_side_raising() -> None:
    assert one_side_raises("On the CPU: RuntimeError: shapes cannot be multiplied\nOn the GPU it ran fine.")


def test_no_error_with_wrong_values_stays_a_value_mismatch() -> None:
    pattern = analyze_issue("addcdiv_ differs from addcdiv", INPLACE_WRONG, []).pattern
    assert pattern is not None and pattern.kind == PatternKind.Variant_Mismatch
    assert pattern.oracle.kind == OracleKind.ValueCorrectness


DEVICE_ONLY = """{prose}

```python
import torch
device = "cuda"
def f(x, idx):
    out = torch.zeros(4, x.shape[1], device=device)
    out.index_add_(0, idx, x * 2)
    return out / (out[idx] + 1e-6)
x = torch.ones(64, 3, device=device)
idx = torch.zeros(64, dtype=torch.long, device=device)
print(f(x, idx))
```
"""


def test_a_compiler_area_label_outranks_the_device_the_code_ran_on() -> None:
    pattern = analyze_issue("index_add followed by a division is wrong", DEVICE_ONLY.format(prose="Wrong output."),
                            ["module: inductor"]).pattern
    assert pattern is not None
    assert (pattern.kind, pattern.test_mode.name) == (PatternKind.Compile_Eager_Mismatch, "compile:inductor")
    assert pattern.test_mode.options.get("device") == "cuda"  # where it was seen is kept


def test_the_prose_naming_torch_compile_outranks_the_device_the_code_ran_on() -> None:
    body = DEVICE_ONLY.format(prose="torch.compile gives a different output from eager for this function.")
    pattern = analyze_issue("index_add followed by a division is wrong", body, []).pattern
    assert pattern is not None and pattern.test_mode.name == "compile:inductor"


def test_a_prose_word_for_a_gradient_does_not_outrank_the_device() -> None:
    body = DEVICE_ONLY.format(prose="Later I call backward on this, but the forward values are already off.")
    pattern = analyze_issue("index_add followed by a division differs on the GPU", body, []).pattern
    assert pattern is not None and pattern.test_mode.name == "device:cuda"


def test_augmented_assignment_onto_an_int_runs_the_tensor_op() -> None:
    body = """Tracing this function and calling it changes the argument.

```python
import torch
def f(x):
    s = 0
    s += x
    s += x
    return s
x = torch.ones(2, 2)
traced = torch.jit.trace(f, x)
traced(x)
print(x)
```
"""
    pattern = analyze_issue("traced function modifies its input", body, []).pattern
    assert pattern is not None
    assert (pattern.api, pattern.test_mode.name) == ("torch.add", "jit.trace")


def test_an_inplace_method_named_bare_in_the_title_is_the_op() -> None:
    body = "Inductor writes the wrong buffer here; the repro is long, the relevant line is `m.lerp_(g, 0.1)`.\n"
    analysis = analyze_issue("[inductor] wrong values after lerp_", body, ["module: correctness (silent)"])
    assert analysis.pattern is not None and analysis.pattern.api == "torch.Tensor.lerp_"


REDUCED_IN_A_COMMENT = """Thanks, I cut it down to this:

```python
import torch

def g(x):
    y = torch.zeros_like(x)
    y[:, 0] += x[:, 1].exp()
    return y.sum()

h = torch.compile(torch.func.grad(g))
x = torch.randn(2, 3)
print(torch.func.grad(g)(x))
print(h(x))
```
"""


def test_a_reduced_repro_in_a_comment_is_the_reports_code() -> None:
    body = "Composing compile with func.grad silently gives a different gradient; the original script is long."
    analysis = analyze_issue("compile of func.grad silently returns a wrong gradient", body, [],
                             [REDUCED_IN_A_COMMENT])
    assert analysis.triage.is_silent_bug, analysis.triage.reason
    assert analysis.pattern is not None and analysis.pattern.test_mode.name.endswith("compile:inductor")


def test_the_repro_to_record_comes_from_a_comment_when_the_description_has_none() -> None:
    from agent.extract.record_stage import repro_of

    code = repro_of("No code here, see below.", ["I can reproduce it too.", REDUCED_IN_A_COMMENT])
    assert code is not None and "torch.func.grad(g)" in code
    assert repro_of("```python\nimport torch\nprint(torch.ones(2))\n```", [REDUCED_IN_A_COMMENT]).startswith(
        "import torch\nprint")  # the description's own repro comes first


def test_values_shown_at_a_prompt_are_printed_values() -> None:
    body = """This looks wrong to me:

```
>>> import torch
>>> a = torch.arange(10)
>>> a[1:].sub(a[:-1])
tensor([1, 1, 1, 1, 1, 1, 1, 1, 1])
>>> a[1:].sub_(a[:-1])
tensor([1, 1, 1, 4, 1, 1, 5, 1, 1])
```
"""
    analysis = analyze_issue("strange values from an in-place op on an overlapping view", body, [])
    assert analysis.facts.printed_values == 2
    assert analysis.triage.is_silent_bug, analysis.triage.reason
    assert analysis.pattern is not None and analysis.pattern.test_mode.name == "variant:inplace"
    assert analysis.api_candidates[0][0] == "torch.Tensor.sub_"  # a call at a prompt is not set aside as printed
    assert analysis.pattern.api == "torch.sub"  # the mode runs its in-place spelling (api_for_mode)


def test_augmented_assignment_onto_a_tensor_is_its_inplace_form() -> None:
    body = """The in-place form differs from the out-of-place one when the operand overlaps the tensor:

```python
import torch
a = torch.randn(3, 3)
b = a.clone()
a -= a[:, :1]
b = b - b[:, :1]
print(torch.allclose(a, b))
```
"""
    pattern = analyze_issue("in-place subtraction of a view of itself is wrong", body, []).pattern
    assert pattern is not None and pattern.test_mode.name == "variant:inplace"


def test_an_overflow_in_the_title_without_a_mode_is_checked_against_float64() -> None:
    body = """The norm of a vector of large but finite entries should be finite:

```python
import torch
v = torch.full((4,), 3e30)
print(torch.linalg.vector_norm(v))
```
"""
    pattern = analyze_issue("vector_norm overflows for large inputs", body, ["module: correctness (silent)"]).pattern
    assert pattern is not None
    assert (pattern.kind, pattern.api, pattern.test_mode.name) == (PatternKind.NaN_Inf, "torch.linalg.vector_norm",
                                                                   "eager")


def test_a_failing_assertion_of_the_repro_is_not_a_side_that_raised() -> None:
    assert not one_side_raises("Compiled: AssertionError: Tensor-likes are not close!\nEager runs successfully.")


def test_a_script_quoting_a_session_in_a_string_is_still_the_script() -> None:
    body = '''Compiled and eager disagree:

```python
import torch

def fn(x):
    return torch.cos(x.pow(5))

x = torch.tensor([4], dtype=torch.uint8)
assert torch.allclose(fn(x), torch.compile(fn)(x))
"""
>>> fn(x)
tensor([1.])
>>> torch.compile(fn)(x)
tensor([0.9874])
"""
```
'''
    analysis = analyze_issue("pow then cos gives a wrong result under compile", body, [])
    assert analysis.triage.is_silent_bug, analysis.triage.reason
    assert analysis.pattern is not None and analysis.pattern.test_mode.name == "compile:inductor"


def test_an_integer_overflow_is_not_a_nan_inf_pattern() -> None:
    body = "```python\nimport torch\nx = torch.ones(300, dtype=torch.uint8)\nprint(x.cumsum(0)[-1])\n```\n"
    pattern = analyze_issue("cumsum of uint8 ones overflows", body, []).pattern
    assert pattern is None or pattern.kind != PatternKind.NaN_Inf


HALF_ZERO_VARIANCE = """Normalising a constant row in half precision gives NaN where float32 gives zeros.

```python
import torch
x = torch.full((2, 6), 3.0)
print(torch.nn.functional.group_norm(x.unsqueeze(0), 1, eps=1e-9))
print(torch.nn.functional.group_norm(x.unsqueeze(0).half(), 1, eps=1e-9))
```
"""


def test_a_low_precision_pair_whose_title_names_a_nan_is_a_nan_inf_pattern() -> None:
    pattern = analyze_issue("group_norm gives nan in float16 for a constant input", HALF_ZERO_VARIANCE, []).pattern
    assert pattern is not None
    assert (pattern.kind, pattern.test_mode.name) == (PatternKind.NaN_Inf, "dtype:float16")  # the pair is kept


def test_a_low_precision_result_that_overflows_to_inf_stays_a_precision_pattern() -> None:
    pattern = analyze_issue("group_norm returns inf in float16 for a constant input", HALF_ZERO_VARIANCE, []).pattern
    assert pattern is not None and pattern.kind == PatternKind.Precision_Mismatch


WRITE_INTO_REPEATED_VIEW = """The values written through `out=` into a view that repeats one element are all the last one.

```python
import torch
base = torch.zeros(1)
target = base.expand(6)
torch.linspace(0, 1, 6, out=target)
print(target)
```
"""


def test_a_constructor_given_an_out_tensor_is_the_op_under_test() -> None:
    pattern = analyze_issue("out= into an expanded view gives repeated values", WRITE_INTO_REPEATED_VIEW, []).pattern
    assert pattern is not None
    assert (pattern.api, pattern.kind) == ("torch.linspace", PatternKind.Layout_Mismatch)


def test_a_constructor_that_builds_an_input_is_not_the_op_under_test() -> None:
    body = "The cumulative maximum skips a value.\n```python\nimport torch\nx = torch.linspace(0, 1, 6)\n" \
           "print(torch.cummax(x.flip(0), 0))\n```\n"
    pattern = analyze_issue("torch.compile: cummax is wrong after flip", body, []).pattern
    assert pattern is not None and pattern.api == "torch.cummax"


TRUNCATED_DEVICE_REPORT = """The rows of the result do not sum to one for this size; the script is longer than this.

```python
import torch
x = torch.randn(3, 700, dtype=torch.float64)
p = torch.softmax(x, dim=-1)
```
"""


def test_a_title_naming_the_gpu_makes_a_device_pair_when_the_code_does_not_show_one() -> None:
    pattern = analyze_issue("softmax rows do not sum to one on the GPU", TRUNCATED_DEVICE_REPORT, []).pattern
    assert pattern is not None
    assert (pattern.kind, pattern.test_mode.name) == (PatternKind.Device_Mismatch, "device:cuda")


def test_the_cuda_area_label_makes_a_device_pair_when_nothing_else_names_a_mode() -> None:
    pattern = analyze_issue("softmax rows do not sum to one", TRUNCATED_DEVICE_REPORT,
                            ["module: cuda", "module: correctness (silent)"]).pattern
    assert pattern is not None and pattern.test_mode.name == "device:cuda"


def test_cuda_in_the_prose_alone_names_no_device_pair() -> None:
    body = TRUNCATED_DEVICE_REPORT + "\nCUDA used to build PyTorch: 12.4\n"
    analysis = analyze_issue("softmax rows do not sum to one", body, [])
    assert analysis.pattern is None or analysis.pattern.test_mode.name != "device:cuda"


def test_a_legacy_typed_constructor_builds_an_input_and_the_title_operator_is_the_op() -> None:
    body = """Under torch.compile the modulo of large int64 values is off.

```python
import torch
a = torch.LongTensor([7, 9, -5])
print(a % (2 ** 50))
```
"""
    analysis = analyze_issue("torch.compile: remainder operator wrong for huge divisors", body, [])
    assert "torch.LongTensor" not in analysis.rejected_apis
    assert analysis.pattern is not None and analysis.pattern.api == "torch.remainder"


def test_a_concatenation_inside_the_traced_function_is_the_op_when_nothing_else_computes() -> None:
    body = """The traced function returns a different result than calling it.

```python
import torch
def grow(x):
    for _ in range(3):
        x = torch.cat((x, x), 0)
    return x
x = torch.randn(2, 3)
print(grow(x).shape, torch.jit.trace(grow, x)(x).shape)
```
"""
    analysis = analyze_issue("jit.trace of a loop gives a wrong result", body, [])
    assert analysis.pattern is not None and analysis.pattern.api == "torch.cat"


def test_a_concatenation_that_builds_the_input_is_set_aside_for_the_op_it_feeds() -> None:
    body = """Traced and eager results differ.

```python
import torch
def f(x):
    return torch.cat((x, x), 0).cumsum(0)
x = torch.randn(2, 3)
print(f(x), torch.jit.trace(f, x)(x))
```
"""
    analysis = analyze_issue("jit.trace gives a wrong cumsum", body, [])
    assert analysis.pattern is not None and analysis.pattern.api == "torch.cumsum"


def test_a_module_class_called_without_its_import_is_the_torch_nn_class() -> None:
    body = """Smoothing changes the loss of samples that should be ignored, on the GPU only.

```python
import torch
loss = CrossEntropyLoss(label_smoothing=0.1, ignore_index=-1)
logits, target = torch.randn(4, 3), torch.tensor([0, -1, 2, 1])
print(loss(logits, target), loss(logits.cuda(), target.cuda()))
```
"""
    analysis = analyze_issue("label smoothing loss differs on cuda", body, [])
    assert analysis.pattern is not None and analysis.pattern.api == "torch.nn.CrossEntropyLoss"


def test_a_capitalised_name_the_snippet_defines_is_not_taken_for_a_torch_nn_class() -> None:
    body = """The output of my layer changes under torch.compile.

```python
import torch
class Linear(torch.nn.Module):
    def forward(self, x):
        return torch.special.expit(x) * 2
m = Linear()
x = torch.randn(4)
print(m(x), torch.compile(m)(x))
```
"""
    analysis = analyze_issue("compiled layer gives a different output", body, [])
    assert analysis.pattern is not None and analysis.pattern.api == "torch.special.expit"


HALF_MEAN_SESSION = """The mean of many ones in half precision is not one.

```python
>>> import torch
>>> torch.ones(70000, dtype=torch.float16).mean()
tensor(nan, dtype=torch.float16)
```
"""


def test_a_low_precision_pair_whose_output_shows_torch_printing_nan_is_a_nan_inf_pattern() -> None:
    pattern = analyze_issue("float16 mean of ones is wrong", HALF_MEAN_SESSION, []).pattern
    assert pattern is not None
    assert (pattern.kind, pattern.test_mode.name) == (PatternKind.NaN_Inf, "dtype:float16")


def test_a_nan_the_input_holds_does_not_name_the_kind() -> None:
    body = """Half precision nanmean differs a lot from float32 here.

```python
import torch
x = torch.tensor([float("nan"), 1000.0, 3.0])
print(torch.nanmean(x), torch.nanmean(x.half()))
```
Output: tensor(nan) for a slice I tried too.
"""
    pattern = analyze_issue("nanmean in float16 is inaccurate", body, []).pattern
    assert pattern is not None and pattern.kind == PatternKind.Precision_Mismatch


SCRIPTED_XOR = """Under torch.jit.script the masked update below leaves the tensor as it was; eager flips the bits.

```python
import torch

def flip(mask):
    counts = torch.zeros(2, 2, dtype=torch.int32)
    counts[:, 0] += 3
    counts[:, 1] ^= 5
    return counts

print(flip(None), torch.jit.script(flip)(None))
```
"""


def test_a_python_operator_the_title_names_is_the_op_its_code_runs_through() -> None:
    pattern = analyze_issue("The `^=` operator on a slice is ignored by TorchScript", SCRIPTED_XOR, []).pattern
    assert pattern is not None and pattern.api == "torch.bitwise_xor"
    assert pattern.test_mode.name == "jit.script"


def test_an_operator_keyword_the_title_marks_as_an_operator_names_its_op() -> None:
    pattern = analyze_issue("In-place xor operator has no effect when scripted", SCRIPTED_XOR, []).pattern
    assert pattern is not None and pattern.api == "torch.bitwise_xor"


HALF_AS_ENGLISH = """For moderately large orders the result is inf for every row: the upper half of the sweep
overflows in float32 before the root is taken.

```python
import torch
a, b = torch.randn(3, 6), torch.randn(3, 6)
for order in (10.0, 60.0, 120.0):
    print(order, torch.cdist(a, b, p=order))
```
"""


def test_half_as_an_english_word_names_no_low_precision_pair() -> None:
    pattern = analyze_issue("torch.cdist returns inf for large p", HALF_AS_ENGLISH, []).pattern
    assert pattern is not None and pattern.kind == PatternKind.NaN_Inf
    assert pattern.test_mode.name == "eager"


def test_half_as_a_dtype_still_names_the_low_precision_pair() -> None:
    body = HALF_AS_ENGLISH.replace("the upper half of the sweep\noverflows in float32", "in half precision it\noverflows")
    pattern = analyze_issue("torch.cdist returns wrong values for large p", body, []).pattern
    assert pattern is not None and pattern.test_mode.name == "dtype:float16"


def _code_pattern(title: str, lead: str, code: str):
    """The pattern of a report: one sentence, then `code` as its only Python block."""
    body = f"{lead}\n\n```python\nimport torch\n{code}\n```\n"
    return analyze_issue(title, body, []).pattern


def _out_pattern(title: str, code: str):
    return _code_pattern(title, "The out= result is not what the plain call returns.", code)


def test_an_out_tensor_that_is_also_an_input_is_an_aliasing_layout_pattern() -> None:
    pattern = _out_pattern("torch.sub with out= set to its first argument",
                           "a = torch.rand(4)\nb = torch.rand(3, 4)\nprint(torch.sub(a, b, out=a))")
    assert pattern is not None
    assert (pattern.api, pattern.kind, pattern.test_mode.name) == ("torch.sub", PatternKind.Layout_Mismatch,
                                                                   "variant:out")


def test_an_out_tensor_that_views_an_input_is_an_aliasing_layout_pattern() -> None:
    pattern = _out_pattern("mm writes the wrong values with out=",
                           "m = torch.rand(3, 3)\nprint(torch.mm(m, m.t(), out=m))")
    assert pattern is not None and pattern.kind == PatternKind.Layout_Mismatch


def test_two_outputs_written_into_one_tensor_are_an_aliasing_layout_pattern() -> None:
    pattern = _out_pattern("sort with out= gives the wrong values",
                           "v = torch.rand(5)\nr = torch.empty(5)\nprint(torch.sort(v, out=(r, r)))")
    assert pattern is not None and pattern.kind == PatternKind.Layout_Mismatch


def test_an_out_tensor_sliced_on_an_inner_dimension_is_a_strided_layout_pattern() -> None:
    pattern = _out_pattern("mm writes the wrong values with out=",
                           "p = torch.rand(3, 3)\nq = torch.zeros(3, 8)\ntorch.mm(p, p, out=q[:, 2:5])\nprint(q)")
    assert pattern is not None and pattern.kind == PatternKind.Layout_Mismatch


def test_a_fresh_out_tensor_is_a_variant_pattern() -> None:
    pattern = _out_pattern("mm writes the wrong values with out=",
                           "p = torch.rand(3, 3)\nq = torch.empty(3, 3)\ntorch.mm(p, p.t(), out=q)\nprint(q)")
    assert pattern is not None and pattern.kind == PatternKind.Variant_Mismatch


def test_an_out_tensor_sliced_on_its_first_dimension_is_a_variant_pattern() -> None:
    pattern = _out_pattern("mm writes the wrong values with out=",
                           "p = torch.rand(3, 3)\nq = torch.zeros(8, 3)\ntorch.mm(p, p, out=q[2:5])\nprint(q)")
    assert pattern is not None and pattern.kind == PatternKind.Variant_Mismatch


def _device_code_pattern(code: str):
    return _code_pattern("matmul gives a different result", "The two results disagree.", code)


def test_one_low_dtype_on_an_accelerator_and_the_cpu_is_a_device_pair() -> None:
    """Note [One low dtype on two devices]"""
    pattern = _device_code_pattern("a = torch.randn(64, 64, dtype=torch.bfloat16, device='cuda')\n"
                                   "print((torch.mm(a, a).cpu() - torch.mm(a.cpu(), a.cpu())).abs().max())")
    assert pattern is not None
    assert (pattern.kind, pattern.test_mode.name) == (PatternKind.Device_Mismatch, "device:cuda")


def test_a_low_dtype_against_float32_on_an_accelerator_stays_a_precision_pair() -> None:
    pattern = _device_code_pattern("a = torch.randn(64, 64, dtype=torch.bfloat16, device='cuda')\n"
                                   "print((torch.mm(a, a).float() - torch.mm(a.float(), a.float())).cpu().abs().max())")
    assert pattern is not None and pattern.kind == PatternKind.Precision_Mismatch


def test_a_low_dtype_on_an_accelerator_alone_stays_a_precision_pair() -> None:
    pattern = _device_code_pattern("a = torch.randn(64, 64, dtype=torch.float16, device='cuda')\n"
                                   "print(torch.mm(a, a).abs().max())")
    assert pattern is not None and pattern.kind == PatternKind.Precision_Mismatch


def test_an_in_place_write_that_reads_a_view_of_itself_is_an_aliasing_layout_pattern() -> None:
    """Note [Writes into repeating views]"""
    pattern = _code_pattern("in-place add of the transpose gives the wrong values", "No error is raised.",
                            "x = torch.rand(4, 4)\nx.add_(x.t())\nprint(x)")
    assert pattern is not None
    assert (pattern.kind, pattern.test_mode.name) == (PatternKind.Layout_Mismatch, "variant:inplace")


def test_an_in_place_write_that_reads_all_of_itself_is_not_an_aliasing_pattern() -> None:
    pattern = _code_pattern("in-place add gives the wrong values", "No error is raised.",
                            "x = torch.rand(4, 4)\nx.add_(x)\nprint(x)")
    assert pattern is None or pattern.kind != PatternKind.Layout_Mismatch


def test_backprop_in_the_title_names_the_gradient_over_the_device_the_code_ran_on() -> None:
    """Note [Device-only reports]: a title that names the condition wins over an accelerator in the code."""
    pattern = _code_pattern("Backprop through this layer stops the loss from going down",
                            "It trains on one and not the other.",
                            "cell = torch.nn.GRU(6, 6).cuda()\nx = torch.randn(3, 2, 6).cuda()\n"
                            "print(cell(x)[0].sum())")
    assert pattern is not None
    assert (pattern.kind, pattern.test_mode.name) == (PatternKind.Gradient_Mismatch, "grad")


# Note [A device in words only] (analyzer.py)
def test_a_title_reporting_an_overflow_beats_a_device_named_only_in_words() -> None:
    pattern = _code_pattern("torch.sinh overflows to inf at 89.0 in float64",
                            "Seen on the CPU; a CUDA machine was not tried.",
                            "x = torch.tensor([89.0], dtype=torch.float64)\nprint(torch.sinh(x))")
    assert pattern is not None
    assert (pattern.kind.value, pattern.api, pattern.test_mode.name) == ("NaN_Inf", "torch.sinh", "eager")


def test_a_device_the_code_uses_keeps_the_device_pair_under_an_overflow_title() -> None:
    pattern = _code_pattern("torch.sinh overflows to inf at 89.0 on CUDA",
                            "The CPU gives a finite value.",
                            "x = torch.tensor([89.0])\nprint(torch.sinh(x), torch.sinh(x.cuda()))")
    assert pattern is not None and pattern.test_mode.name == "device:cuda"


@pytest.mark.parametrize("code", [
    "k = 2\nsrc = torch.randn(4, 6)\nacc = torch.zeros(6, 4)\ntorch.cumsum(src[k], 0, out=acc[:, k])\nprint(acc)",
    "src = torch.randn(6)\nbuf = torch.zeros(6, 2)\ncol = buf[:, 0]\ntorch.cumsum(src, 0, out=col)\nprint(buf)",
], ids=["indexed by an int name", "bound to a name first"])
def test_an_out_tensor_that_is_a_column_is_a_strided_layout_pattern(code: str) -> None:
    """Note [Writes into repeating views]: a column (``acc[:, k]``, k an int) is written through its strides."""
    pattern = _code_pattern("cumsum with out= gives values in the wrong places", "No error is raised.", code)
    assert pattern is not None
    assert (pattern.kind, pattern.test_mode.name) == (PatternKind.Layout_Mismatch, "variant:out")


def test_one_low_dtype_on_two_devices_stays_a_device_pair_with_integer_dtypes_and_a_dtype_title() -> None:
    """Note [One low dtype on two devices]: the int16 bit pattern and the title's float16 name no precision pair."""
    pattern = _code_pattern("torch.nextafter on CUDA differs for float16 subnormals", "The CPU disagrees.",
                            "bits = torch.tensor([1, 2, 3], dtype=torch.int16).view(torch.float16)\n"
                            "one = torch.ones(3, dtype=torch.float16)\n"
                            "print(torch.nextafter(bits, one), torch.nextafter(bits.cuda(), one.cuda()).cpu())")
    assert pattern is not None
    assert (pattern.kind, pattern.test_mode.name) == (PatternKind.Device_Mismatch, "device:cuda")
    assert "float16" in pattern.trigger.dtypes


def test_a_float32_comparison_on_two_devices_keeps_the_precision_pair_the_title_names() -> None:
    pattern = _code_pattern("torch.nextafter loses precision in float16", "Compared with float32.",
                            "x = torch.rand(3)\nh = x.half()\n"
                            "print(torch.nextafter(h.cuda(), h.cuda()).cpu().float() - torch.nextafter(x, x))")
    assert pattern is not None and pattern.kind == PatternKind.Precision_Mismatch


def test_a_title_saying_a_value_is_nonzero_names_a_wrong_result() -> None:
    body = ("The gradient of the padding row should stay zero.\n\n```python\nimport torch\n"
            "emb = torch.nn.Embedding(6, 3, padding_idx=0)\nemb(torch.zeros(1, 900, dtype=torch.long)).sum().backward()\n"
            "print(emb.weight.grad[0])\n```\n")
    analysis = analyze_issue("Padding row gradient is nonzero for long inputs", body, [])
    assert analysis.triage.is_silent_bug
