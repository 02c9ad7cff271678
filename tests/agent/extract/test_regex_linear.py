"""Every pattern run on issue text takes linear time: 64 KiB of its worst input in under 0.2 s.

The bodies below are the inputs that made the earlier regexes quadratic (seconds to minutes
each; see Note [Linear-time patterns on issue text] and Note [Fenced blocks in linear time]).
The rewritten scanners must also find exactly what the regexes found, which the property tests
check against the old patterns on small inputs, where their cost does not matter.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.extract.analyzer import analyze_issue
from agent.extract.codeblocks import _fenced, code_blocks
from agent.extract.modes import mode_pair
from agent.extract.scan import CodeFacts
from agent.extract.text import _FEATURE_HEADINGS, _FIX_PR, _TENSOR_SCALAR, _reported_diffs, read_signals

BODY_BYTES = 64 * 1024
LIMIT_S = 0.2  # what issue 10 asks of a 64 KiB body


def _fill(unit: str, head: str = "", tail: str = "") -> str:
    return head + unit * ((BODY_BYTES - len(head) - len(tail)) // len(unit)) + tail


ADVERSARIAL_BODIES = {
    "unclosed backtick fences": _fill("```a\n"),
    "unclosed tilde fences": _fill("~~~x\n"),
    "one line of backticks": _fill("`"),
    "long fence runs": _fill("`" * 200 + "\n"),
    "indented fences": _fill(" " * 60 + "```\n"),
    "cuda without cpu": _fill("cuda "),
    "blank lines": _fill("\n"),
    "blank lines with spaces": _fill(" \n"),
    "diff words without values": _fill("diff ", "```\n", "\n```\n"),
    "diff colon then spaces": _fill(" ", "```\ndiff:", "\n```\n"),
    "diff colons without numbers": _fill("err: x ", "```\n", "\n```\n"),
    "blank lines in printed output": _fill("\n", "```python\nprint((a - b).abs().max())\n```\n```\n", "```\n"),
    "fixes without a number": _fill("fixes "),
    "headings": _fill("### "),
    "torchscript": _fill("torchscript "),
    "float64 without reference": _fill("float64 "),
}


def _extractors(body: str) -> dict[str, Callable[[], object]]:
    blocks = code_blocks(body)
    signals = read_signals("t", body, [], [], blocks)
    return {
        "code_blocks": lambda: code_blocks(body),
        "read_signals": lambda: read_signals("t", body, [], [body], blocks),
        "mode_pair": lambda: mode_pair(CodeFacts(), body, body, signals),
        "analyze_issue": lambda: analyze_issue(body[:2000], body, [], [body]),
    }


def _best_of_three(call: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize("name", list(ADVERSARIAL_BODIES))
def test_adversarial_body_is_read_in_linear_time(name: str) -> None:
    body = ADVERSARIAL_BODIES[name]
    assert len(body.encode()) >= BODY_BYTES - 300
    slow = {}
    for extractor, call in _extractors(body).items():
        elapsed = _best_of_three(call)
        if elapsed >= LIMIT_S:
            slow[extractor] = round(elapsed, 3)
    assert not slow, f"{name}: {slow}"


# The patterns these scanners replaced, kept only as the reference for what they must find.
_OLD_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+-]*)[^\n]*\n(?P<code>.*?)^(?P=indent)(?P=fence)[ \t]*$",
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
