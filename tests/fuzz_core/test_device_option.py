"""Note [A device the modes skip]: a harness whose options name an accelerator its test mode never runs on."""

from __future__ import annotations

import pytest
import torch

from fuzz_core import HarnessSpec, run_harness
from fuzz_core.campaign import device_not_run


@pytest.mark.skipif(torch.cuda.is_available(), reason="the case of a machine without CUDA")
def test_a_layout_harness_seen_on_cuda_is_not_applicable_without_cuda(tmp_path) -> None:
    spec = HarnessSpec(api="torch.add", test_mode="layout:noncontiguous", mode_options={"device": "cuda"}, seed=1)
    result = run_harness(spec, max_executions=20, workdir=tmp_path)
    assert result.verdict == "not_applicable" and result.executions == 0
    assert result.reason.startswith("cuda is not available on this machine (the pattern was seen on cuda)")


def test_a_device_named_with_an_index_is_that_device() -> None:
    why = device_not_run("dtype:bfloat16", {"device": "cuda:1"})
    assert why is not None and why.startswith("cuda ")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_where_cuda_exists_a_mode_that_stays_on_the_cpu_says_so(tmp_path) -> None:
    spec = HarnessSpec(api="torch.add", test_mode="layout:noncontiguous", mode_options={"device": "cuda"}, seed=1)
    result = run_harness(spec, max_executions=20, workdir=tmp_path)
    assert result.verdict == "not_applicable" and result.executions == 0
    assert "layout:noncontiguous does not run on cuda" in result.reason


def test_device_modes_and_cpu_options_run() -> None:
    assert device_not_run("device:cuda", {"device": "cuda"}) is None
    assert device_not_run("grad:device:cuda", {}) is None
    assert device_not_run("layout:noncontiguous", {"device": "cpu"}) is None
    assert device_not_run("layout:noncontiguous", {}) is None
