"""Inputs for inventory APIs that are not OpInfo names: variants, aliases, schemas, modules, sparse."""

from __future__ import annotations

import pytest
import torch

from fuzz_core.inputs import NoInputs
from fuzz_core.inputs.inventory import accepts, inventory_samples, opinfo_any_dtype
from fuzz_core.inputs.opinfo_variants import opinfo_for_callable
from fuzz_core.target import build_target


@pytest.mark.parametrize("api", ["torch.Tensor.softmax", "torch.Tensor.scatter_", "torch.Tensor.scatter_reduce_",
                                 "torch.Tensor.addcdiv", "torch.Tensor.select_scatter"])
def test_method_variants_get_their_opinfo_samples(api: str) -> None:
    target = build_target(api)
    samples = inventory_samples(target, torch.float32, 0, 2)
    assert samples and all(s.origin.startswith("opinfo-variant:") for s in samples)
    assert all(accepts(target, s) for s in samples)


def test_alias_maps_to_the_entry_it_aliases() -> None:
    assert opinfo_for_callable(torch.arccos).name == "acos"
    assert opinfo_for_callable(torch.Tensor.arccos_).name == "acos"


@pytest.mark.parametrize("api", ["torch.nn.CosineSimilarity", "torch.nn.Upsample", "torch.nn.LazyBatchNorm1d",
                                 "torch.nn.functional.upsample", "torch.prelu", "torch.nn.L1Loss"])
def test_constructors_and_required_arguments_are_satisfied(api: str) -> None:
    target = build_target(api)
    samples = inventory_samples(target, torch.float32, 0, 1)
    assert samples and accepts(target, samples[0])


def test_sspaddmm_gets_a_sparse_input() -> None:
    target = build_target("torch.sspaddmm")
    sample = inventory_samples(target, torch.float32, 0, 1)[0]
    assert sample.args[0].layout == torch.sparse_coo
    assert accepts(target, sample)


def test_opinfo_op_without_the_harness_dtype_uses_one_it_supports() -> None:
    samples = opinfo_any_dtype("torch.bitwise_and", torch.float32, 1)
    assert not samples[0].args[0].is_floating_point()


def test_device_only_method_has_no_cpu_input_and_says_why() -> None:
    with pytest.raises(NoInputs, match="torch.Tensor.cuda"):
        inventory_samples(build_target("torch.Tensor.cuda"), torch.float32, 0, 1)
