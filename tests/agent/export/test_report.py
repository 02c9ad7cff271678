"""Pieces of a report read from fuzz_core's evidence."""

from __future__ import annotations

from agent.export.report import describe_input


def test_input_description_reads_fuzz_core_evidence() -> None:
    described = {"origin": "code:1", "tensors": [
        {"shape": [4, 3], "dtype": "torch.float32", "stride": [3, 1], "contiguous": True},
        {"shape": [3, 4], "dtype": "torch.float32", "stride": [1, 3], "contiguous": False},
    ]}
    assert describe_input(described) == "torch.float32[4, 3], torch.float32[3, 4] non-contiguous (stride [1, 3])"
    assert describe_input(None) == "" and describe_input({"tensors": "?"}) == ""
