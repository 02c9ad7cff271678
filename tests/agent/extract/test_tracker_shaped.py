"""Reports shaped as the tracker gives them (tracker_shaped.py), through the text path and the recorded-run path.

The text path is the offline analyzer on the report alone; the recorded path runs the report's repro once in the
real bubblewrap sandbox under the recorder and gives the analyzer what ran, as `extract` and
`eval extraction --record` do (the offline backend's own join of the two).
"""

from __future__ import annotations

import ast
from concurrent.futures import ThreadPoolExecutor

import pytest

from agent.extract.analyzer import analyze_issue, analyze_raw
from agent.extract.codeblocks import unfenced_code
from agent.extract.record_run import RecordRun, record_repro
from agent.extract.record_stage import facts_of_run, repro_of
from agent.extract.recorded import RecordedFacts
from agent.extract.scan import scan_tree
from agent.extract.text import _values_differ
from agent.llm.offline import _with_recording
from agent.patterns import PatternKind
from tests.agent.extract import tracker_shaped as shaped
from tests.agent.extract.tracker_shaped import ALL, Report

# --------------------------------------------------------------------------- the text path


@pytest.mark.parametrize("report", ALL, ids=[r.name for r in ALL])
def test_the_text_gives_the_pattern(report: Report) -> None:
    analysis = analyze_raw(report.raw())
    assert analysis.triage.is_silent_bug, analysis.triage.reason
    assert analysis.pattern is not None, analysis.pattern_error
    got = (analysis.pattern.kind.value, analysis.pattern.api, analysis.pattern.test_mode.name)
    assert got == report.expected


@pytest.mark.parametrize("report", [shaped.MPS, shaped.XPU], ids=["mps", "xpu"])
def test_a_device_only_report_keeps_the_device_it_ran_on(report: Report) -> None:
    pattern = analyze_raw(report.raw()).pattern
    assert pattern is not None and pattern.test_mode.options == {"device": report.name}


def _tree(code: str) -> ast.Module:
    return ast.parse(code)


def test_a_printed_difference_of_two_results_is_noted() -> None:
    facts = scan_tree(_tree("import torch\na = torch.ones(2)\nb = torch.zeros(2)\nprint((a - b).abs().max())\n"))
    assert facts.prints_difference


def test_a_printed_shift_by_a_literal_is_no_difference() -> None:
    facts = scan_tree(_tree("import torch\na = torch.ones(2)\nprint(a - 1)\n"))
    assert not facts.prints_difference


def test_a_difference_computed_but_never_printed_is_not_noted() -> None:
    facts = scan_tree(_tree("import torch\na = torch.ones(2)\nb = torch.zeros(2)\nd = (a - b).abs().max()\n"))
    assert not facts.prints_difference


def test_printed_values_are_counted_and_their_labels_are_not() -> None:
    facts = scan_tree(_tree('import torch\na = torch.ones(2)\nprint("eager:", a)\nprint(f"compiled: {a}")\n'))
    assert facts.printed_values == 2


def test_pasted_output_lines_that_disagree_are_evidence() -> None:
    assert _values_differ("eager   : tensor([0.2500, 0.5000])\ncompiled: tensor([0.2500, 0.7500])")
    assert _values_differ("tensor(1.0032)\ntensor(0., dtype=torch.bfloat16)")


def test_pasted_output_lines_that_agree_are_not() -> None:
    assert not _values_differ("tensor([1., 2.])\ntensor([1., 2.], dtype=torch.float16)")


def test_an_environment_dump_is_not_output() -> None:
    assert not _values_differ(shaped.VERSIONS)


def test_a_repro_that_prints_both_sides_is_a_silent_bug_without_any_words() -> None:
    code = ("import torch\nx = torch.linspace(0, 1, 7)\nprint(torch.erfinv(x))\n"
            "print(torch.erfinv(x.half()))\n")
    analysis = analyze_issue("erfinv", f"### 🐛 Describe the bug\n\n```python\n{code}```\n\n{shaped.VERSIONS}", [])
    assert analysis.triage.is_silent_bug, analysis.triage.reason


def test_a_repro_that_prints_one_value_is_not_evidence_enough() -> None:
    code = "import torch\nx = torch.linspace(0, 1, 7)\nprint(torch.erfinv(x.half()))\n"
    analysis = analyze_issue("erfinv", f"### 🐛 Describe the bug\n\n```python\n{code}```\n\n{shaped.VERSIONS}", [])
    assert not analysis.triage.is_silent_bug


def test_an_indented_markdown_code_block_is_read_as_code() -> None:
    (block,) = unfenced_code(shaped.INDENTED.body)
    assert block.text.startswith("import torch\nimport torch.nn.functional as F\n")
    assert "print(out_cpu, out_gpu)" in block.text


def test_an_indented_run_ends_at_the_first_line_without_its_indent() -> None:
    body = "Repro:\n\n    import torch\n    x = torch.ones(3)\n    print(x.cumsum(0))\nThat prints the sums.\n"
    (block,) = unfenced_code(body)
    assert block.text.strip().splitlines() == ["import torch", "x = torch.ones(3)", "print(x.cumsum(0))"]


def test_channels_last_in_the_code_is_a_layout_pair_without_words() -> None:
    pattern = analyze_raw(shaped.CLOSED_COMPLETED.raw()).pattern
    assert pattern is not None and pattern.test_mode.name == "layout:channels_last"


def test_a_compile_mode_argument_does_not_lose_the_pattern() -> None:
    pattern = analyze_raw(shaped.COMPILE_MODE.raw()).pattern  # "mode" is the formal notation's own key
    assert pattern is not None and "mode" not in pattern.test_mode.options


def test_both_forms_of_one_op_are_a_variant_pair_without_words() -> None:
    pattern = analyze_raw(shaped.BOTH_FORMS.raw()).pattern
    assert pattern is not None and pattern.test_mode.name == "variant:inplace"


def test_an_in_place_call_of_another_op_is_no_variant_pair() -> None:
    code = "import torch\nx = torch.rand(4)\nx.zero_()\nprint(torch.cumsum(x, 0))\nprint(torch.cumsum(x.half(), 0))\n"
    pattern = analyze_issue("cumsum", f"```python\n{code}```\n", []).pattern
    assert pattern is not None and pattern.test_mode.name == "dtype:float16"


def test_a_title_saying_a_check_fails_is_not_a_crash_report() -> None:
    assert analyze_raw(shaped.GRADCHECK.raw()).triage.is_silent_bug


def test_a_title_saying_a_run_fails_with_an_error_is_not_silent() -> None:
    body = ("```python\nimport torch\nx = torch.rand(3, dtype=torch.double, requires_grad=True)\n"
            "torch.autograd.gradcheck(torch.special.xlog1py, (x, x))\n```\n\n```\nTraceback (most recent call last):\n"
            "RuntimeError: expected scalar type Float but found Double\n```\n")
    assert not analyze_issue("gradcheck fails for xlog1py", body, []).triage.is_silent_bug


# --------------------------------------------------------------------------- the repro as it is run


def test_the_repro_joins_the_blocks_that_continue_it() -> None:
    code = repro_of(shaped.SPLIT_BLOCKS.body)
    assert code is not None
    assert code.startswith("import torch\nimport torch.nn.functional as F\n\nx = torch.linspace(-20, 20, 101)")
    assert "compiled = torch.compile(F.mish" in code
    assert "tensor([0., 0., 0.])" not in code  # the printed output between them is not code


def test_the_repro_stops_at_a_second_script() -> None:
    body = ("```python\nimport torch\nx = torch.ones(2)\n```\n\nthen\n\n```python\nprint(x.exp())\n```\n\n"
            "A workaround:\n\n```python\nimport torch\nprint(torch.ones(2).exp())\n```\n")
    assert repro_of(body) == "import torch\nx = torch.ones(2)\n\nprint(x.exp())\n"


def test_a_repro_pasted_without_a_fence_is_run() -> None:
    code = repro_of(shaped.UNFENCED.body)
    assert code is not None and code.startswith("import torch\nimport torch.nn.functional as F\n")


def test_a_repro_without_its_imports_gets_the_usual_ones() -> None:
    code = repro_of("```python\nx = torch.ones(3)\nprint(F.relu(x))\n```\n")
    assert code == "import torch\nimport torch.nn.functional as F\n\nx = torch.ones(3)\nprint(F.relu(x))\n"


def test_prompts_are_stripped_from_the_repro() -> None:
    code = repro_of(shaped.PROMPTS.body)
    assert code is not None and ">>>" not in code and "tensor(inf" not in code


# --------------------------------------------------------------------------- the recorded path

RECORDED = [shaped.JACREV, shaped.EXPORT, shaped.MPS, shaped.XPU, shaped.TWO_NUMBERS, shaped.INPLACE,
            shaped.OUT_VARIANT, shaped.JIT_SCRIPT_ABS, shaped.SPLIT_BLOCKS, shaped.PROMPTS, shaped.UNFENCED,
            shaped.RAISES_LATER, shaped.ALIASES, shaped.METHOD_CHAIN, shaped.CLOSED_COMPLETED]


@pytest.fixture(scope="module")
def runs() -> dict[str, RecordRun]:
    def run(report: Report) -> RecordRun:
        code = repro_of(report.body)
        assert code is not None, report.name
        return record_repro(code, sandbox=True, timeout_s=90)

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {r.name: pool.submit(run, r) for r in RECORDED}
        return {name: future.result() for name, future in futures.items()}


def _facts(run: RecordRun) -> RecordedFacts:
    facts = facts_of_run(run)
    assert facts is not None, (run.status, run.reason, run.stderr_tail)
    return facts


@pytest.mark.parametrize("report", RECORDED, ids=[r.name for r in RECORDED])
def test_text_and_recording_together_give_the_pattern(report: Report, runs: dict[str, RecordRun]) -> None:
    analysis = _with_recording(analyze_raw(report.raw()), _facts(runs[report.name]).model_dump_json(), report.body)
    assert analysis.pattern is not None, analysis.pattern_error
    got = (analysis.pattern.kind.value, analysis.pattern.api, analysis.pattern.test_mode.name)
    assert got == report.expected


def test_a_difference_quotient_is_not_the_comparison(runs: dict[str, RecordRun]) -> None:
    facts = _facts(runs["jacrev"])
    assert facts.compared == "printed two values"
    assert (facts.kind, facts.api, facts.test_mode, facts.mode_basis) == (PatternKind.Gradient_Mismatch, "torch.logit",
                                                                          "grad", "sides")


def test_an_in_place_side_is_a_variant_pair(runs: dict[str, RecordRun]) -> None:
    facts = _facts(runs["inplace"])
    assert (facts.kind, facts.api, facts.test_mode, facts.mode_basis) == (PatternKind.Variant_Mismatch, "torch.clamp",
                                                                          "variant:inplace", "sides")


def test_an_out_side_is_a_variant_pair(runs: dict[str, RecordRun]) -> None:
    facts = _facts(runs["out_variant"])
    assert (facts.kind, facts.api, facts.test_mode) == (PatternKind.Variant_Mismatch, "torch.cumsum", "variant:out")


# MPS, like CUDA, is run again on the CPU (Note [CUDA on the CPU]); XPU is not, and its run stops where it failed
@pytest.mark.parametrize(("device", "status"), [("mps", "ok"), ("xpu", "raised")])
def test_a_missing_device_other_than_cuda_is_a_device_pattern(device: str, status: str,
                                                              runs: dict[str, RecordRun]) -> None:
    run = runs[device]
    assert run.status == status and device.upper() in run.reason.upper(), run.reason
    facts = _facts(run)
    assert (facts.kind, facts.test_mode, facts.test_options) == (PatternKind.Device_Mismatch, "device:cuda",
                                                                 {"device": device})
    assert facts.device_only == [device]


def test_a_repro_split_over_blocks_runs_whole(runs: dict[str, RecordRun]) -> None:
    facts = _facts(runs["split_blocks"])
    assert runs["split_blocks"].status == "ok"
    assert (facts.kind, facts.api, facts.test_mode, facts.mode_basis) == (
        PatternKind.Compile_Eager_Mismatch, "torch.nn.functional.mish", "compile:aot_eager", "sides")


def test_a_repro_pasted_without_a_fence_is_recorded(runs: dict[str, RecordRun]) -> None:
    facts = _facts(runs["unfenced"])
    assert runs["unfenced"].status == "ok"
    # the op nearest the one printed value made it (torch.log only set up its input); this torch returns a finite
    # value, so the recording names no kind and the text's NaN_Inf stands (test_text_and_recording_together...)
    assert (facts.api, facts.kind) == ("torch.nn.functional.kl_div", None)


def test_a_compiled_lambda_is_read_from_its_context(runs: dict[str, RecordRun]) -> None:
    facts = _facts(runs["raises_later"])
    assert facts.api == "torch.nn.functional.softplus"
    assert facts.kind == PatternKind.Compile_Eager_Mismatch and facts.test_mode == "compile:aot_eager"
