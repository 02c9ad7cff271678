"""Ranking: semantic neighbours first, structural gates keep impossible targets out."""

from __future__ import annotations

from agent.patterns import BugPattern, Mode, Oracle, Trigger
from agent.transfer.profile import ApiProfile, profile_from_semantics
from agent.transfer.rank import TransferIndex, gate

FLOATS = ["float16", "bfloat16", "float32", "float64"]


def _profile(api: str, category: str, summary: str, params: list[dict], dtypes=FLOATS, **details) -> ApiProfile:
    return profile_from_semantics(api, category, summary, params, dtypes, details)


def _t(name: str = "input") -> dict:
    return {"name": name, "role": "input", "kind": "tensor"}


INVENTORY = [
    _profile("torch.nn.functional.relu6", "activation", "Applies the element-wise ReLU6 function, min(max(0, x), 6).",
             [_t(), {"name": "inplace", "role": "inplace", "kind": "bool"}]),
    _profile("torch.nn.functional.hardtanh", "activation", "Applies the HardTanh function element-wise: clamps to [min_val, max_val].",
             [_t(), {"name": "min_val", "role": "bounds", "kind": "float"}, {"name": "max_val", "role": "bounds", "kind": "float"},
              {"name": "inplace", "role": "inplace", "kind": "bool"}]),
    _profile("torch.nn.functional.relu", "activation", "Applies the rectified linear unit function element-wise.",
             [_t(), {"name": "inplace", "role": "inplace", "kind": "bool"}]),
    _profile("torch.clamp", "pointwise", "Clamps all elements in input into the range [min, max].",
             [_t(), {"name": "min", "role": "bounds", "kind": "float"}, {"name": "max", "role": "bounds", "kind": "float"}],
             has_out=True),
    _profile("torch.nn.functional.conv2d", "convolution", "Applies a 2D convolution over an input image composed of several input planes.",
             [_t(), {"name": "weight", "role": "weight", "kind": "tensor"}, {"name": "bias", "role": "bias", "kind": "tensor"},
              {"name": "stride", "role": "stride", "kind": "tuple"}, {"name": "padding", "role": "padding", "kind": "tuple"}]),
    _profile("torch.nn.functional.max_pool2d", "pooling", "Applies a 2D max pooling over an input signal composed of several input planes.",
             [_t(), {"name": "kernel_size", "role": "kernel_size", "kind": "tuple"}, {"name": "padding", "role": "padding", "kind": "tuple"}]),
    _profile("torch.argmax", "reduction", "Returns the indices of the maximum value of all elements in the input tensor.",
             [_t(), {"name": "dim", "role": "dim", "kind": "int"}], dtypes=FLOATS + ["int64"]),
    _profile("torch.bitwise_and", "pointwise", "Computes the bitwise AND of input and other.",
             [_t(), _t("other")], dtypes=["int32", "int64", "bool"], has_out=True),
]


def _pattern(api: str, test_mode: str = "jit.trace", trigger: Trigger | None = None) -> BugPattern:
    return BugPattern(kind="JIT_Eager_Mismatch", api=api, reference_mode=Mode(name="eager"),
                      test_mode=Mode(name=test_mode), trigger=trigger or Trigger(), oracle=Oracle())


def test_activation_bug_transfers_to_activations_first() -> None:
    index = TransferIndex(INVENTORY)
    source = INVENTORY[0]
    ranked = index.rank(_pattern(source.api, trigger=Trigger(special_values=["nan"])), source, top_k=3)
    targets = [c.target_api for c in ranked]
    assert source.api not in targets
    assert set(targets[:2]) == {"torch.nn.functional.hardtanh", "torch.nn.functional.relu"}
    assert "torch.bitwise_and" not in targets  # no floating input for a NaN trigger
    assert all(0 < c.score <= 1 for c in ranked)
    assert "same category 'activation'" in ranked[0].rationale


def test_padding_bug_only_reaches_apis_with_padding() -> None:
    index = TransferIndex(INVENTORY)
    pattern = _pattern("torch.nn.functional.conv2d", trigger=Trigger(params={"padding": ">0"}))
    ranked = index.rank(pattern, INVENTORY[4], top_k=10)
    assert [c.target_api for c in ranked] == ["torch.nn.functional.max_pool2d"]
    assert ranked[0].adapted_trigger["params"] == {"padding": ">0"}


def test_out_variant_pattern_needs_out() -> None:
    pattern = _pattern("torch.add", test_mode="variant:out")
    assert gate(pattern, INVENTORY[0]) == "no out= variant"
    assert gate(pattern, INVENTORY[3]) is None


def test_precision_pattern_needs_the_low_dtype() -> None:
    pattern = _pattern("torch.add", test_mode="dtype:float16")
    assert gate(pattern, INVENTORY[-1]) == "does not support float16"


def test_aliases_of_the_source_are_not_candidates() -> None:
    index = TransferIndex(INVENTORY + [_profile("torch.relu6", "activation", "relu6", [_t()])])
    ranked = index.rank(_pattern("torch.nn.functional.relu6"), INVENTORY[0], top_k=10)
    assert "torch.relu6" not in [c.target_api for c in ranked]


def test_unknown_source_falls_back_to_its_name() -> None:
    index = TransferIndex(INVENTORY)
    ranked = index.rank(_pattern("torch.nn.ReLU6"), None, top_k=2)  # a public API the inventory lacks
    assert ranked and ranked[0].target_api in {"torch.nn.functional.relu", "torch.nn.functional.relu6"}
