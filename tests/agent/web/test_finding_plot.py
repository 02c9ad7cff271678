"""The per-element error plot of a real finding: a sandboxed WorkerPool finds it, the database stores it, the page draws it."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent.web.plots import element_errors
from db.models import Harness
from db.queries.campaign import claim, record_result, start_run
from db.store import Store, open_store
from fuzz_core import HarnessSpec, WorkerPool
from tests.agent.web.server import review_server

# float16 lp_pool1d with norm_type=4 raises x to the 4th power in float16: wherever |x| >= 16, x**4 exceeds 65504
# and the output is inf, while float32 and float64 give |x| (at most 30, far inside float16's range). A (2, 8)
# input with values in [-30, 30] mixes such elements with finite ones, so the plot has inf positions to mark.
LP_POOL_FP16 = HarnessSpec(
    api="torch.nn.functional.lp_pool1d", reference_mode="eager", test_mode="dtype:float16", oracle="nan_inf",
    input_source="described", seed=1776983066, kind="Precision_Mismatch",
    inputs={"args": [{"kind": "tensor", "tensor": {"shape": [2, 8], "low": -30.0, "high": 30.0}},
                     {"kind": "float", "value": 4.0}, {"kind": "int", "value": 1}]})


@pytest.fixture
def found(tmp_path: Path) -> Iterator[tuple[Store, int]]:
    """A confirmed finding stored the way the fuzz stage stores one: claim, run in the sandboxed pool, record."""
    store = open_store(f"sqlite:///{tmp_path / 'review.db'}")
    with store.session() as session:
        run_id = start_run(session, "fuzz", {"budget_s": 30})
        harness = Harness(spec=LP_POOL_FP16.to_dict(), status="pending")
        session.add(harness)
        session.flush()
        harness_id = harness.id
        assert claim(session, harness_id, run_id)
    with WorkerPool(1, task_timeout_s=120, workdir=tmp_path / "work", minimise_s=None, preload_opinfo=False) as pool:
        result = pool.submit(LP_POOL_FP16, budget_s=20).result()
    assert result.verdict == "confirmed", result.reason
    with store.session() as session:
        finding_id = record_result(session, harness_id, run_id, verdict=result.verdict, reason=result.reason,
                                   evidence=result.evidence, repro=result.repro, signature=result.signature)
    assert finding_id is not None
    try:
        yield store, finding_id
    finally:
        store.close()


def test_a_real_finding_gets_the_per_element_plot(found: tuple[Store, int]) -> None:
    store, finding_id = found
    with review_server(store) as server, httpx.Client(base_url=server.base_url, timeout=60) as client:
        body = client.get(f"/api/findings/{finding_id}").json()
        assert body["plot_kind"] == "elements"
        evidence = body["finding"]["evidence"]
        errors = element_errors(evidence)
        assert errors is not None and errors.total == errors.stride * len(errors.test)
        # the elements where float16 gives inf (|x| >= 16) and float64 a finite |x| are the ones marked
        assert errors.nonfinite and all(errors.test[i] == float("inf") for i in errors.nonfinite)
        assert all(math.isfinite(errors.reference[i]) for i in errors.nonfinite)  # float32 eager stays finite
        page = client.get(f"/findings/{finding_id}").text
        assert 'id="error-plot"' in page and "Per output element" in page
        plot = client.get(body["plot_url"])
        assert plot.status_code == 200 and plot.headers["content-type"] == "image/svg+xml"
        assert b"<svg" in plot.content and b"<text" not in plot.content
