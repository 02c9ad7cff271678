"""One tolerance table: torch.testing's own assert_close defaults (the report rules read it too: tests/agent/export)."""

from __future__ import annotations

import torch
from torch.testing._comparison import default_tolerances

from fuzz_core.oracles.tolerance import DTYPE_PRECISIONS, default_tolerance


def test_the_table_is_torch_testings_defaults() -> None:
    for dtype, (rtol, atol) in DTYPE_PRECISIONS.items():
        assert default_tolerances(torch.empty(0, dtype=dtype)) == (rtol, atol), dtype


def test_dtypes_are_named_as_evidence_stores_them() -> None:
    assert default_tolerance("float16") == default_tolerance("torch.float16") == DTYPE_PRECISIONS[torch.float16]
    assert default_tolerance("int64") is None and default_tolerance(None) is None

