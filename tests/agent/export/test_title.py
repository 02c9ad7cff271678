"""Report titles: the bracket follows the mode pair, the headline names the API and condition."""

from __future__ import annotations

import pytest

from agent.export.title import bracket, mode_words, title


@pytest.mark.parametrize(
    ("reference", "test", "kind", "verdict", "expected"),
    [
        ("eager", "compile:inductor", "Compile_Eager_Mismatch", "confirmed", "Eager/Compile Divergence"),
        ("eager", "compile:aot_eager", "Compile_Eager_Mismatch", "confirmed", "Eager/Compile Divergence"),
        ("eager", "jit.trace", "JIT_Eager_Mismatch", "confirmed", "Eager/JIT Divergence"),
        ("eager", "jit.script", "JIT_Eager_Mismatch", "suspicious", "Eager/JIT Divergence"),
        ("eager", "dtype:float16", "Precision_Mismatch", "confirmed", "Precision Divergence"),
        ("eager", "autocast:bfloat16", "Precision_Mismatch", "confirmed", "Precision Divergence"),
        ("eager", "layout:channels_last", "Layout_Mismatch", "confirmed", "Layout Divergence"),
        ("eager", "variant:out", "Variant_Mismatch", "confirmed", "Variant Divergence"),
        ("eager", "device:cuda", "Device_Mismatch", "confirmed", "CPU/CUDA Divergence"),
        ("eager", "vmap", "Batch_Mismatch", "confirmed", "vmap/Loop Divergence"),
        ("eager", "eager", "NaN_Inf", "confirmed", "NaN/Inf"),
        ("eager", "compile:inductor", "Exception_Mismatch", "confirmed", "Eager/Compile Exception Divergence"),
        ("eager", "compile:inductor", "Compile_Eager_Mismatch", "crash", "Eager/Compile Crash"),
        ("eager", "eager", "Crash", "crash", "Crash"),
        ("?", "?", "?", "confirmed", "Divergence"),
    ],
)
def test_bracket_from_mode_pair(reference: str, test: str, kind: str, verdict: str, expected: str) -> None:
    assert bracket(reference, test, kind, verdict) == expected


def test_titles_read_as_pytorch_issue_titles() -> None:
    assert (
        title("torch.cumsum", "eager", "compile:inductor", "Compile_Eager_Mismatch", "confirmed", "float16 inputs with nan")
        == "[Eager/Compile Divergence] torch.cumsum under torch.compile (inductor) differs from eager on float16 inputs with nan"
    )
    assert (
        title("torch.mm", "eager", "variant:out", "Variant_Mismatch", "confirmed", "")
        == "[Variant Divergence] torch.mm under the out= variant differs from eager"
    )
    assert title("torch.sort", "eager", "jit.script", "JIT_Eager_Mismatch", "crash", "").startswith(
        "[Eager/JIT Crash] torch.sort crashes under torch.jit.script"
    )


def test_gradient_modes_are_named_by_where_the_forward_runs() -> None:
    assert mode_words("grad:device:cuda") == "autograd on CUDA"
    assert mode_words("grad:compile:inductor") == "autograd through torch.compile (inductor)"
