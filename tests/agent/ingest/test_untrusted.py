"""Checks on one untrusted JSON value: nesting, surrogates, non-finite numbers, NUL, text caps."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.ingest.untrusted import MAX_NESTING, UnsafeValue, cap_text, inspect_value, quoted, without_nul


def test_ordinary_issue_passes_and_counts_text_per_key() -> None:
    facts = inspect_value({"title": "abc", "labels": [{"name": "bug"}], "number": 3, "score": 1.5})
    assert not facts.has_nul
    assert facts.chars_by_key == {"title": 3, "labels": 3}


def test_nesting_at_the_limit_passes_and_one_deeper_fails() -> None:
    at_limit = json.loads("[" * MAX_NESTING + "]" * MAX_NESTING)
    inspect_value(at_limit)
    with pytest.raises(UnsafeValue, match=f"nested deeper than {MAX_NESTING} levels"):
        inspect_value([at_limit])


def test_deep_value_is_walked_without_recursion() -> None:
    deep: list = []
    for _ in range(50_000):
        deep = [deep]
    with pytest.raises(UnsafeValue, match="nested deeper"):
        inspect_value(deep)


def test_lone_surrogate_is_named_with_its_escaped_path() -> None:
    with pytest.raises(UnsafeValue, match=r"comments\.0\.body: lone surrogate U\+D83D at character 2"):
        inspect_value({"comments": [{"body": "ok\ud83d"}]})
    with pytest.raises(UnsafeValue, match=r"^\\udc00: lone surrogate"):
        inspect_value({"\udc00": 1})


def test_paired_surrogates_written_as_escapes_are_one_character() -> None:
    inspect_value(json.loads('{"title": "\\ud83d\\ude00"}'))  # an emoji, not a lone surrogate


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_numbers_fail(number: float) -> None:
    with pytest.raises(UnsafeValue, match="not a finite number"):
        inspect_value({"x": [number]})


def test_nul_is_found_and_removed_from_keys_and_values() -> None:
    value = {"a\x00": ["b\x00c", {"d": "\x00"}], "n": 1}
    assert inspect_value(value).has_nul
    assert without_nul(value) == {"a": ["bc", {"d": ""}], "n": 1}


@given(st.text(), st.integers(min_value=4, max_value=64))
def test_cap_text_keeps_the_longest_prefix_that_fits(text: str, max_bytes: int) -> None:
    text = text.encode("utf-8", "ignore").decode("utf-8")  # no lone surrogates (rejected before)
    kept, cut = cap_text(text, max_bytes)
    assert text.startswith(kept) and len(kept.encode("utf-8")) <= max_bytes
    assert cut == (kept != text)
    if cut:
        assert len(text[: len(kept) + 1].encode("utf-8")) > max_bytes


def test_quoted_escapes_control_characters_and_cuts() -> None:
    assert quoted("a\x1b]52;c;x\x07b") == "a\\x1b]52;c;x\\x07b"
    assert quoted("x" * 100, 5) == "xxxxx..."
