"""Described inputs: typed data materialised deterministically; anything outside the vocabulary is refused."""

from __future__ import annotations

import math

import pytest
import torch

from fuzz_core.inputs import InputError
from fuzz_core.inputs.described import described_samples, materialise
from fuzz_core.inputs.description import MAX_NUMEL, DescriptionError, InputDescription
from fuzz_core.runner import run_harness
from fuzz_core.spec import HarnessSpec, SpecError
from fuzz_core.target import build_target


def _tensor(shape: list[int], **fields: object) -> dict:
    return {"kind": "tensor", "tensor": {"shape": shape, **fields}}


def _describe(*args: dict, **kwargs: dict) -> InputDescription:
    return InputDescription.from_dict({"args": list(args), "kwargs": kwargs})


def test_tensors_have_the_requested_shape_dtype_range_and_layout() -> None:
    description = _describe(_tensor([3, 5], dtype="float64", low=2.0, high=3.0, layout="transposed"),
                            _tensor([2, 3, 4, 4], dtype="float16", layout="channels_last"),
                            _tensor([4, 6], dtype="int16", low=-2, high=2, layout="noncontiguous"),
                            _tensor([7], dtype="bool"))
    ranged, channels_last, ints, flags = materialise(description, torch.float32, seed=5).args
    assert ranged.shape == (3, 5) and ranged.dtype == torch.float64 and ranged.stride() == (1, 3)
    assert bool(((ranged >= 2.0) & (ranged <= 3.0)).all())
    assert channels_last.dtype == torch.float16 and channels_last.is_contiguous(memory_format=torch.channels_last)
    assert not channels_last.is_contiguous()
    assert ints.dtype == torch.int16 and not ints.is_contiguous() and set(ints.unique().tolist()) <= {-2, -1, 0, 1, 2}
    assert flags.dtype == torch.bool and flags.shape == (7,)


def test_special_values_land_once_each_in_a_floating_tensor() -> None:
    description = _describe(_tensor([4, 4], special_values=["nan", "-inf", "-0.0", "denormal", "huge"]))
    (x,) = materialise(description, torch.bfloat16, seed=1).args
    flat = x.float().view(-1)
    assert x.dtype == torch.bfloat16  # no dtype given: the harness's dtype
    assert int(flat.isnan().sum()) == 1 and int((flat == -math.inf).sum()) == 1
    assert int(((flat == 0) & torch.signbit(flat)).sum()) >= 1
    info = torch.finfo(torch.bfloat16)
    assert int(((flat.abs() > 0) & (flat.abs() < info.smallest_normal)).sum()) >= 1
    assert float(flat[torch.isfinite(flat)].abs().max()) >= info.max / 4


def test_same_seed_same_tensors_other_seed_other_values() -> None:
    description = _describe(_tensor([3, 4], special_values=["nan"]), {"kind": "int_list", "value": [1, 2]},
                            dim={"kind": "int", "value": -1}, reduction={"kind": "str", "value": "mean"})
    first, again, other = (materialise(description, torch.float32, seed=s) for s in (9, 9, 10))
    torch.testing.assert_close(first.args[0], again.args[0], equal_nan=True)
    assert not torch.equal(first.args[0].nan_to_num(), other.args[0].nan_to_num())
    assert first.args[1] == [1, 2] and first.kwargs == {"dim": -1, "reduction": "mean"}


def test_requires_grad_is_set_on_floating_tensors() -> None:
    (x,) = materialise(_describe(_tensor([2, 2], requires_grad=True)), torch.float32, seed=0).args
    assert x.requires_grad and x.is_leaf


def test_module_constructor_kwargs_go_to_the_module() -> None:
    description = InputDescription.from_dict({"args": [_tensor([2, 4])],
                                              "constructor_kwargs": {"min_val": {"kind": "float", "value": -0.5}}})
    samples = described_samples(build_target("torch.nn.Hardtanh"), description, torch.float32, seed=2, max_samples=16)
    assert len(samples) == 4 and all(s.ctor == {"min_val": -0.5} for s in samples)
    with pytest.raises(InputError, match="not a module class"):
        described_samples(build_target("torch.relu"), description, torch.float32, seed=2, max_samples=16)


@pytest.mark.parametrize(("data", "reason"), [
    ({"args": [_tensor([4096, 4096])]}, f"at most {MAX_NUMEL}"),
    ({"args": [_tensor([2] * 7)]}, "at most 6 sizes"),
    ({"args": [_tensor([-1, 3])]}, "sizes must be integers"),
    ({"args": [_tensor([3], dtype="os.system('x')")]}, "dtype: \"os.system('x')\" is not one of"),
    ({"args": [_tensor([3], special_values=["__import__"])]}, "special_values: must be some of"),
    ({"args": [_tensor([3], dtype="int32", special_values=["nan"])]}, "need a floating dtype"),
    ({"args": [_tensor([3, 3], layout="channels_last")]}, "channels_last needs a 4-D"),
    ({"args": [_tensor([3], low=2.0, high=1.0)]}, "above high"),
    ({"args": [{"kind": "str", "value": "__import__('os').system('x')"}]}, "not an allowed string"),
    ({"kwargs": {"eps": {"kind": "str", "value": "eval('1')"}}}, "not an allowed string"),
    ({"kwargs": {"__class__": {"kind": "int", "value": 1}}}, "not a plain parameter name"),
    ({"args": [{"kind": "code", "value": "import os"}]}, "kind: 'code' is not one of"),
    ({"code": "def make_inputs(seed): ..."}, "unknown field(s) ['code']"),
    ({"args": [{"kind": "int", "value": True}]}, "must be an integer"),
    ({"args": [{"kind": "float", "value": float("nan")}]}, "finite number"),
    ({"constructor_kwargs": {"weight": _tensor([2])}}, "must be a literal"),
])
def test_descriptions_outside_the_vocabulary_are_refused_with_a_reason(data: dict, reason: str) -> None:
    with pytest.raises(DescriptionError) as info:
        InputDescription.from_dict(data)
    assert reason in str(info.value)


def test_description_round_trips_through_its_dict() -> None:
    description = _describe(_tensor([2, 3], dtype="float32", special_values=["inf"]), {"kind": "none"},
                            k={"kind": "int_list", "value": [2, 2]})
    assert InputDescription.from_dict(description.to_dict()) == description


def test_spec_validates_its_description_and_keeps_old_ids() -> None:
    with pytest.raises(SpecError, match="input description: args\\[0\\].tensor.shape"):
        HarnessSpec(api="torch.relu", input_source="described", inputs={"args": [_tensor([1 << 20])]})
    with pytest.raises(SpecError, match="needs inputs"):
        HarnessSpec(api="torch.relu", input_source="described")
    with pytest.raises(SpecError, match="only by input_source 'described'"):
        HarnessSpec(api="torch.relu", input_source="signature", inputs={"args": []})
    # A spec without a description hashes as it did before descriptions existed (stored ids stay valid).
    assert HarnessSpec(api="torch.relu", test_mode="jit.trace", seed=7).spec_id == "a1706f984454f86a"


def test_described_harness_runs_to_a_verdict() -> None:
    spec = HarnessSpec(api="torch.nn.Hardtanh", input_source="described", test_mode="jit.trace", seed=4,
                       inputs={"args": [_tensor([3, 8], special_values=["nan"])],
                               "constructor_kwargs": {"min_val": {"kind": "float", "value": -1.0},
                                                      "max_val": {"kind": "float", "value": 1.0}}})
    result = run_harness(HarnessSpec.from_dict(spec.to_dict()), max_executions=30)
    assert result.verdict == "passed", result.reason
    assert result.evidence["input_source"] == "described" and result.executions > 0
