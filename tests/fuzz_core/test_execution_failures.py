"""`failed`: which exceptions out of a test mode mean "this kernel does not exist there" (not applicable)."""

from __future__ import annotations

from fuzz_core.execution import failed
from fuzz_core.modes import get_mode


def test_an_op_that_takes_only_float_parameters_is_not_applicable_in_float16() -> None:
    run = failed(get_mode("dtype:float16"), RuntimeError("expected scalar type Float but found Half"))
    assert run.status == "na"


def test_an_op_that_makes_float32_from_half_inputs_is_still_an_exception() -> None:
    run = failed(get_mode("dtype:float16"), RuntimeError("expected scalar type Half but found Float"))
    assert run.status == "exc"


def test_the_eager_reference_raising_is_never_not_applicable() -> None:
    run = failed(get_mode("eager"), RuntimeError("expected scalar type Float but found Half"))
    assert run.status == "exc"


def test_a_compiled_mode_raising_it_is_still_an_exception() -> None:
    # compile keeps the inputs' dtypes: a dtype error only the compiled side raises is its own bug
    run = failed(get_mode("compile:inductor"), RuntimeError("expected scalar type Float but found Half"))
    assert run.status == "exc"
