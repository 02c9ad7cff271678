"""The formal notation prints and parses back every pattern; bad text names position and token."""

from __future__ import annotations

import typing

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.patterns import (
    KNOWN_MODES,
    BugPattern,
    FormalParseError,
    Mode,
    Oracle,
    OracleKind,
    PatternKind,
    Trigger,
    parse_formal,
)
from agent.patterns.schema import LayoutCondition, ShapeCondition, SpecialValue

identifiers = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
# a pattern names one of torch's public callables (fuzz_core.api_names), so draw real ones
apis = st.sampled_from(["torch.mm", "torch.add", "torch.nn.functional.relu6", "torch.Tensor.add_", "torch.nn.Conv2d",
                        "torch.linalg.svd", "torch.special.erf", "torch.fft.rfft", "torch.nn.functional.conv2d"])
option_values = st.one_of(
    st.booleans(),
    st.integers(-1000, 1000),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.text(min_size=0, max_size=12),
)
modes = st.builds(
    Mode,
    name=st.sampled_from(KNOWN_MODES),
    options=st.dictionaries(identifiers.filter(lambda k: k != "mode"), option_values, max_size=3),
)
triggers = st.builds(
    Trigger,
    dtypes=st.lists(st.sampled_from(["float16", "bfloat16", "float32", "float64", "int64"]), max_size=3),
    special_values=st.lists(st.sampled_from(typing.get_args(SpecialValue)), max_size=4),
    layout=st.one_of(st.none(), st.sampled_from(typing.get_args(LayoutCondition))),
    shape=st.lists(st.sampled_from(typing.get_args(ShapeCondition)), max_size=3),
    params=st.dictionaries(identifiers, st.text(max_size=10), max_size=3),
)
tolerance = st.one_of(st.none(), st.floats(min_value=0, max_value=1e3, allow_nan=False))


@st.composite
def oracles(draw: st.DrawFn) -> Oracle:
    kind = draw(st.sampled_from(list(OracleKind)))
    if kind != OracleKind.ValueCorrectness:
        return Oracle(kind=kind)
    return Oracle(kind=kind, tol=draw(tolerance), rtol=draw(tolerance), atol=draw(tolerance))


patterns = st.builds(
    BugPattern,
    kind=st.sampled_from(list(PatternKind)),
    api=apis,
    reference_mode=modes,
    test_mode=modes,
    trigger=triggers,
    oracle=oracles(),
)


@settings(max_examples=300, deadline=None)
@given(patterns, st.booleans())
def test_formal_round_trip(pattern: BugPattern, ascii_spelling: bool) -> None:
    text = pattern.to_formal(ascii=ascii_spelling)
    assert parse_formal(text).formal_part() == pattern.formal_part()


def test_design_doc_example_parses() -> None:
    text = (
        "JIT_Eager_Mismatch ::= APICall(torch.mm)[mode=eager] → v1\n"
        "                     ∧ APICall(torch.mm)[mode=jit.trace] → v2\n"
        "                     ∧ OracleCheck(ValueCorrectness)(condition=Compare(v1, v2, tol=1e-3)) → FAIL"
    )
    pattern = parse_formal(text)
    assert pattern.kind == PatternKind.JIT_Eager_Mismatch
    assert pattern.api == "torch.mm"
    assert (pattern.reference_mode.name, pattern.test_mode.name) == ("eager", "jit.trace")
    assert pattern.oracle.tol == pytest.approx(1e-3)


def test_printed_notation_matches_design_doc() -> None:
    pattern = BugPattern(
        kind="JIT_Eager_Mismatch",
        api="torch.mm",
        reference_mode=Mode(name="eager"),
        test_mode=Mode(name="jit.trace"),
        oracle=Oracle(tol=1e-3),
    )
    assert " ".join(pattern.to_formal().split()) == (
        "JIT_Eager_Mismatch ::= APICall(torch.mm)[mode=eager] → v1 ∧ APICall(torch.mm)[mode=jit.trace] → v2 "
        "∧ OracleCheck(ValueCorrectness)(condition=Compare(v1, v2, tol=0.001)) → FAIL"
    )


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("Jit_Mismatch ::= APICall(torch.mm)[mode=eager] -> v1", "Jit_Mismatch"),
        ("JIT_Eager_Mismatch ::= APICall(torch.mm)[mode=jit.trice] -> v1", "jit.trice"),
        ("JIT_Eager_Mismatch ::= APICall torch.mm", "torch.mm"),
        ("JIT_Eager_Mismatch ::= APICall(torch.mm)[mode=eager] -> v1 AND APICall(torch.mm)[mode=jit.trace] -> v2 "
         "AND OracleCheck(ValueCorrectness)(condition=SameNaN(v1, v2)) -> FAIL", "SameNaN"),
        ("JIT_Eager_Mismatch ::= APICall(torch.mm)[mode=eager] -> v1 $", "$"),
    ],
)
def test_parse_error_names_the_bad_token(text: str, token: str) -> None:
    with pytest.raises(FormalParseError) as info:
        parse_formal(text)
    assert info.value.token == token
    assert text[info.value.position :].startswith(token)
    assert "position" in str(info.value)


def test_two_calls_must_name_the_same_api() -> None:
    text = (
        "NaN_Inf ::= APICall(torch.mm)[mode=eager] -> v1 AND APICall(torch.bmm)[mode=eager] -> v2 "
        "AND OracleCheck(NaNConsistency)(condition=SameNaN(v1, v2)) -> FAIL"
    )
    with pytest.raises(FormalParseError, match="same API") as info:
        parse_formal(text)
    assert info.value.token == "torch.bmm"


def test_unknown_mode_is_rejected_by_the_schema() -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        Mode(name="compile:tvm")
