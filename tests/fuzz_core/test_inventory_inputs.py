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


def _rule_sample(api: str):  # type: ignore[no-untyped-def]
    target = build_target(api)
    sample = inventory_samples(target, torch.float32, 0, 1)[0]
    assert sample.origin == f"arg-rule:{api}"
    assert accepts(target, sample)
    return sample


@pytest.mark.parametrize("api", ["torch.q_scale", "torch.Tensor.int_repr", "torch.quantized_max_pool2d",
                                 "torch.quantized_batch_norm"])
def test_quantized_apis_get_quantized_tensors(api: str) -> None:
    assert _rule_sample(api).args[0].is_quantized


def test_per_channel_accessors_get_a_per_channel_tensor() -> None:
    q = _rule_sample("torch.Tensor.q_per_channel_scales").args[0]
    assert q.qscheme() == torch.per_channel_affine and q.q_per_channel_axis() == 0


def test_quantize_per_tensor_gets_a_float_input_and_valid_parameters() -> None:
    x, scale, zero_point, qdtype = _rule_sample("torch.quantize_per_tensor").args
    assert x.is_floating_point() and scale > 0 and 0 <= zero_point <= 255 and qdtype == torch.quint8


@pytest.mark.parametrize("api", ["torch.nn.MaxUnpool1d", "torch.nn.MaxUnpool2d", "torch.nn.MaxUnpool3d"])
def test_max_unpool_gets_the_indices_its_max_pool_returned(api: str) -> None:
    values, indices = _rule_sample(api).args
    assert indices.dtype == torch.int64 and indices.shape == values.shape
    assert int(indices.min()) >= 0 and int(indices.max()) < values[0, 0].numel() * 2 ** (values.dim() - 2)


def test_fold_output_size_and_kernel_agree_with_the_blocks() -> None:
    blocks, output_size, kernel = _rule_sample("torch.nn.functional.fold").args
    channels_by_kernel, count = blocks.shape[1:]
    assert channels_by_kernel % (kernel[0] * kernel[1]) == 0
    assert count == (output_size[0] - kernel[0] + 1) * (output_size[1] - kernel[1] + 1)


def test_ctc_lengths_fit_the_sequences_and_targets_avoid_blank() -> None:
    log_probs, targets, input_lengths, target_lengths = _rule_sample("torch.nn.CTCLoss").args
    assert bool((input_lengths <= log_probs.shape[0]).all()) and bool((target_lengths <= targets.shape[1]).all())
    assert int(targets.min()) >= 1 and int(targets.max()) < log_probs.shape[2]
    assert torch.allclose(log_probs.exp().sum(-1), torch.ones(log_probs.shape[:2]))


@pytest.mark.parametrize("api", ["torch.lstm_cell", "torch.gru_cell", "torch.rnn_tanh", "torch.gru"])
def test_rnn_internals_get_matching_hidden_state_and_weights(api: str) -> None:
    sample = _rule_sample(api)
    hx = sample.args[1][0] if isinstance(sample.args[1], list) else sample.args[1]
    assert hx.shape[-1] == 5 and hx.shape[-2] == 2


def test_batch_norm_gets_positive_running_variance() -> None:
    args = _rule_sample("torch.batch_norm").args
    assert bool((args[4] > 0).all())


@pytest.mark.parametrize("api", ["torch.sparse_bsr_tensor", "torch.sparse_compressed_tensor", "torch.spmm",
                                 "torch.Tensor.sparse_mask"])
def test_sparse_apis_get_valid_sparse_operands(api: str) -> None:
    target = build_target(api)
    sample = inventory_samples(target, torch.float32, 0, 1)[0]
    with torch.sparse.check_sparse_tensor_invariants():  # indices in range, row pointers consistent with the size
        result = target.fn(*sample.args, **sample.kwargs)
    if result.layout != torch.strided:
        result = result.to_dense()
    assert torch.isfinite(result).all()


def test_multinomial_weights_are_non_negative() -> None:
    assert bool((_rule_sample("torch.Tensor.multinomial").args[0] >= 0).all())


def test_rule_inputs_are_the_same_for_the_same_seed() -> None:
    from fuzz_core.inputs.arg_rules import RULES, build_sample

    call = RULES["torch.nn.MaxUnpool2d"][0]
    first, second = (build_sample("torch.nn.MaxUnpool2d", call, torch.float32, 3) for _ in range(2))
    assert all(torch.equal(a, b) for a, b in zip(first.args, second.args))


def test_every_rule_builds_an_input_eager_accepts() -> None:
    from fuzz_core.inputs.arg_rules import RULES, rule_samples

    rejected = [api for api in RULES if not rule_samples(build_target(api), torch.float32, 0, 1, accepts)]
    assert rejected == []
