"""What the finding page prints for the failing input and the worst elements (agent/web/format.py, worst.py)."""

from __future__ import annotations

import math
from pathlib import Path

import torch

from agent.review.values import tensor_values
from agent.web.format import input_rows, nonfinite, value, verdict_sentence
from agent.web.worst import value_table
from fuzz_core.evidence import Evidence
from fuzz_core.saved_outputs import save_outputs


def test_numbers_read_as_people_write_them() -> None:
    # fuzz_core stores non-finite numbers in JSON as strings; float max stands for an infinite distance
    assert [value(v) for v in ("inf", "-inf", "nan", math.inf, 1.7976931348623157e308, 0.1 + 0.2, 3)] == \
        ["Inf", "-Inf", "NaN", "Inf", "Inf", "0.3", "3"]
    assert nonfinite("nan") and nonfinite(math.inf) and not nonfinite(1.0) and not nonfinite("torch.float16")


def test_input_rows_show_small_tensors_whole_and_large_ones_as_a_summary() -> None:
    small = tensor_values("arg0", torch.tensor([[-26.0, float("inf")]]))
    large = tensor_values("arg1", torch.cat([torch.arange(40.0), torch.tensor([float("nan")])]))
    rows = input_rows([small, large, {"name": "dim", "value": "1"}])
    assert (rows[0].kind, rows[0].values, rows[0].nonfinite) == ("float32 [1, 2]", ["-26", "Inf"], True)
    assert rows[1].values is None and rows[1].nonfinite
    assert rows[1].summary == "41 elements: min 0, max 39, 1 NaN, 0 Inf; first 8: 0, 1, 2, 3, 4, 5, 6, 7"
    assert (rows[2].name, rows[2].kind, rows[2].values) == ("dim", "literal", ["1"])


def test_input_rows_fall_back_to_the_described_shapes() -> None:
    described = Evidence.of({"input": {"origin": "described:1", "tensors": [
        {"shape": [2, 8], "dtype": "torch.float16", "stride": [1, 2], "contiguous": False}, None]}}).described_input
    (row,) = input_rows([], described)
    assert (row.kind, row.values) == ("float16 [2, 8]", None)
    assert row.summary == "values not saved with this finding, strides [1, 2] (not contiguous)"
    assert input_rows([], None) == []


def test_worst_elements_come_first_and_the_sentence_names_them(tmp_path: Path) -> None:
    reference = torch.tensor([1.0, 2.0, 26.0, 4.0])
    test = torch.tensor([1.0, 2.5, float("inf"), 4.0], dtype=torch.float16)
    fp64 = torch.tensor([1.0, 2.0, 26.0, 4.0], dtype=torch.float64)
    path = tmp_path / "outputs.safetensors"
    assert save_outputs({"reference": reference, "test": test, "fp64": fp64}, path, "out") is None  # None: written
    table = value_table({"outputs_path": str(path)}, "eager", "dtype:float16")
    assert table is not None and table.total == 4 and table.output_dtype == "float16"
    assert [row.index for row in table.rows[:2]] == ["2", "1"]  # inf against finite first, then the 0.5 gap
    assert math.isinf(table.rows[0].test_error) and table.rows[0].reference_error == 0
    sentence = verdict_sentence("confirmed", "torch.x", table, 2, 4, "")
    assert sentence == "Confirmed bug: torch.x under dtype:float16 gives Inf where eager gives 26 and float64 gives 26 (2 of 4 elements differ)."
    assert verdict_sentence("confirmed", "torch.x", table, 1, 1, "").endswith("(1 of 1 element differs).")
    assert verdict_sentence("passed", "torch.x", None, None, None, "no input differed; 40 compared") == \
        "Passed: no input differed."
