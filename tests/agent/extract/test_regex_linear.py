"""Every pattern run on issue text takes linear time on its worst input: 4x the body costs at most 8x the work.

The bodies below are the inputs that made the earlier regexes quadratic (seconds to minutes
each; see Note [Linear-time patterns on issue text] and Note [Fenced blocks in linear time]).
Each is read at two sizes, 16 KiB and 64 KiB (the size issue 10 asks about): linear work grows 4x,
quadratic work 16x, so the bound between them is 8x. The work is this thread's CPU time (best of three,
the sizes interleaved, garbage collection off), so a busy machine, which delays the thread without
making it do more, moves the ratio little; absolute speed targets live in benchmarks/ingest_large_body.py.
`test_the_ratio_tells_quadratic_from_linear` shows the measure catches the old quadratic fence regex.
The rewritten scanners must also find exactly what the regexes found, which the property tests
check against the old patterns on small inputs, where their cost does not matter.
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.extract.analyzer import analyze_issue
from agent.extract.codeblocks import _fenced, code_blocks
from agent.extract.modes import mode_pair, one_side_raises, prints_nan, prints_nonfinite
from agent.extract.scan import CodeFacts
from agent.extract.text import _FEATURE_HEADINGS, _FIX_PR, _TENSOR_SCALAR, _reported_diffs, read_signals

BODY_BYTES = 64 * 1024  # the larger size; the smaller one is a quarter of it
SIZE_FACTOR = 4
LINEAR_RATIO_MAX = 8.0  # linear work grows SIZE_FACTOR (4x), quadratic SIZE_FACTOR**2 (16x): the bound between


def _fill(unit: str, head: str = "", tail: str = "", size: int = BODY_BYTES) -> str:
    return head + unit * ((size - len(head) - len(tail)) // len(unit)) + tail


ADVERSARIAL_BODIES: dict[str, tuple[str, str, str]] = {  # name -> (unit, head, tail)
    "unclosed backtick fences": ("```a\n", "", ""),
    "unclosed tilde fences": ("~~~x\n", "", ""),
    "one line of backticks": ("`", "", ""),
    "long fence runs": ("`" * 200 + "\n", "", ""),
    "indented fences": (" " * 60 + "```\n", "", ""),
    "cuda without cpu": ("cuda ", "", ""),
    "blank lines": ("\n", "", ""),
    "blank lines with spaces": (" \n", "", ""),
    "diff words without values": ("diff ", "```\n", "\n```\n"),
    "diff colon then spaces": (" ", "```\ndiff:", "\n```\n"),
    "diff colons without numbers": ("err: x ", "```\n", "\n```\n"),
    "blank lines in printed output": ("\n", "```python\nprint((a - b).abs().max())\n```\n```\n", "```\n"),
    "fixes without a number": ("fixes ", "", ""),
    "headings": ("### ", "", ""),
    "torchscript": ("torchscript ", "", ""),
    "float64 without reference": ("float64 ", "", ""),
    "printed value lines": ("out: tensor([1.5, 2.5])\n", "```\n", "\n```\n"),
    "labels without values": ("a" * 29 + ":", "```\n", "\n```\n"),
    "an indented code run": ("    y = torch.ones(2)\n", "Repro:\n\n    import torch\n", ""),
    "a long word after pasted output": ("a", "```python\nimport torch\n1 1 1\n", "!\n```\n"),
    "raise words without an error": ("raises the ", "", ""),
    "one long word ending near error": ("e", "", "rror"),
    "printed tensors that are not nan": ("tensor([ [ ", "", ""),
    "one bracket run after a printed tensor": ("[", "tensor(", " na"),
    "expected values that are integers": ("expected 12 ", "", ""),
    "should be without a sentence end": ("should be x ", "", ""),
    "inline torch calls in prose": ("`torch.ones(2).sum()` gives ", "", ""),
    "inline torch call starts without an end": ("`torch.a(", "", ""),
    "one inline torch call that never closes": ("x", "`torch.ones(", ""),
    "lines that are each an inline code span": ("`y = x * 2`\n", "`x = torch.ones(2)`\n", ""),
    "a bare repro that goes on and on": ("y = x + 1\n", "x = torch.ones(2)\n", ""),
    "printed tensors holding inf that never close": ("tensor([-inf, ", "", ""),
    "lines opening with triple-backtick inline code": ("```x``` is ```y```\n", "", ""),
    "backtick runs with a backtick after their info": ("`" * 60 + "x`\n", "", ""),
}


def _extractors(body: str) -> dict[str, Callable[[], object]]:
    blocks = code_blocks(body)
    signals = read_signals("t", body, [], [], blocks)
    return {
        "code_blocks": lambda: code_blocks(body),
        "read_signals": lambda: read_signals("t", body, [], [body], blocks),
        "mode_pair": lambda: mode_pair(CodeFacts(), body, body, signals),
        "one_side_raises": lambda: one_side_raises(body),
        "prints_nan": lambda: prints_nan(body),
        "prints_nonfinite": lambda: prints_nonfinite(body),
        "analyze_issue": lambda: analyze_issue(body[:2000], body, [], [body]),
    }


def work_ratio(small: Callable[[], object], large: Callable[[], object], repeats: int = 3) -> float:
    """CPU time of `large` over CPU time of `small` (each the best of `repeats`, interleaved, after a warm-up
    call of each): the work, not the wall time, so other processes on the machine barely move it."""
    small()  # warm-up: lazy imports and caches are paid once, outside the measure
    large()
    best = [float("inf"), float("inf")]
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for i, call in enumerate((small, large)):
                started = time.thread_time()
                call()
                best[i] = min(best[i], time.thread_time() - started)
    finally:
        if enabled:
            gc.enable()
    return best[1] / max(best[0], 1e-6)


def test_the_ratio_tells_quadratic_from_linear() -> None:
    """The measure itself: the old fence regex, quadratic on unclosed fences, is caught at small sizes (2 and
    8 KiB, where it still takes well under a second); a linear scan of the same text is not."""
    small, large = _fill("```a\n", size=2 * 1024), _fill("```a\n", size=8 * 1024)
    assert work_ratio(lambda: list(_OLD_FENCE.finditer(small)), lambda: list(_OLD_FENCE.finditer(large))) > (
        LINEAR_RATIO_MAX)
    assert work_ratio(lambda: sum(c == "`" for c in small), lambda: sum(c == "`" for c in large)) < LINEAR_RATIO_MAX


@pytest.mark.parametrize("name", list(ADVERSARIAL_BODIES))
def test_adversarial_body_is_read_in_linear_time(name: str) -> None:
    unit, head, tail = ADVERSARIAL_BODIES[name]
    large = _fill(unit, head, tail)
    small = _fill(unit, head, tail, size=BODY_BYTES // SIZE_FACTOR)
    assert len(large.encode()) >= BODY_BYTES - 300 and len(small) * (SIZE_FACTOR - 0.1) <= len(large)
    small_calls, large_calls = _extractors(small), _extractors(large)
    superlinear = {}
    for extractor in large_calls:
        ratio = work_ratio(small_calls[extractor], large_calls[extractor])
        if ratio >= LINEAR_RATIO_MAX:
            superlinear[extractor] = round(ratio, 1)
    assert not superlinear, f"{name}: 4x the body cost this many times the work: {superlinear}"


# The patterns these scanners replaced, kept only as the reference for what they must find.
# A backtick fence's info string holds no backtick (CommonMark): after the line's whole backtick run, none follows.
_OLD_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}(?=`*[^`\n]*$)|~{3,})[ \t]*(?P<lang>[\w+-]*)[^\n]*\n(?P<code>.*?)"
    r"^(?P=indent)(?P=fence)[ \t]*$",
    re.M | re.S,
)
_OLD_DIFF_LINE = re.compile(r"(?:diff|difference|err(?:or)?)\b[^\n]*?[:=]\s*(?:tensor\()?\s*(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)", re.I)
_OLD_TENSOR_SCALAR = re.compile(r"^\s*(?:tensor\()?(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)\s*(?:[,)]|$)", re.M)
_OLD_FEATURE_HEADINGS = re.compile(r"###\s*(?:🚀|📚)|^\s*\[(?:feature request|rfc|feature)\]", re.M)
_OLD_FIX_PR = re.compile(r"^\s*(?:fixes|closes|resolves)\s+(?:#|https?://\S+/issues/)\d+", re.M)

_fence_pieces = st.sampled_from(["```", "````", "~~~", "``", " ", "\t", "py", "python", "x = 1", "\n", "\n", "`", "~"])
_diff_pieces = st.sampled_from(["diff", "difference", "error", "err", "errors", ":", "=", " ", "\n", "tensor(", "1.5", "-2", "3e-4", "x", ",", ")", "\t"])
_line_pieces = st.sampled_from([" ", "\t", "\n", "\n", "[feature]", "[rfc]", "fixes", "closes", " #12", "https://x/issues/3", "x", "\r", "\x0b"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_fence_pieces, max_size=40).map("".join))
def test_fence_boundaries_match_the_old_regex(body: str) -> None:
    expected = [(m.group("lang"), m.group("code")) for m in _OLD_FENCE.finditer(body)]
    assert list(_fenced(body)) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(_diff_pieces, max_size=30).map("".join))
def test_reported_diffs_match_the_old_regex(output: str) -> None:
    assert _reported_diffs(output) == [float(m) for m in _OLD_DIFF_LINE.findall(output)]


@settings(max_examples=300, deadline=None)
@given(st.lists(_diff_pieces, max_size=30).map("".join))
def test_printed_scalars_match_the_old_regex(output: str) -> None:
    assert _TENSOR_SCALAR.findall(output) == _OLD_TENSOR_SCALAR.findall(output)


@settings(max_examples=300, deadline=None)
@given(st.lists(_line_pieces, max_size=30).map("".join))
def test_line_start_patterns_match_the_old_regexes(text: str) -> None:
    assert bool(_FEATURE_HEADINGS.search(text)) == bool(_OLD_FEATURE_HEADINGS.search(text))
    assert bool(_FIX_PR.search(text)) == bool(_OLD_FIX_PR.search(text))
