"""Issue 22 item 3 (trigger params): typed from the API's signature, bounded like input descriptions,
dropped with a reason (never a crash) at the fuzz core's entry point, the harness spec."""

from __future__ import annotations

import json
import math

import pytest
import torch

from fuzz_core.inputs import Sample
from fuzz_core.inputs.triggers import apply_trigger
from fuzz_core.spec import HarnessSpec
from fuzz_core.trigger_params import MAX_PARAMS, check_params

GOOD = {"dim": 0, "keepdim": True, "eps": 1e-6, "padding": "> 0", "mode": "bilinear", "kernel_size": [3, 3],
        "out_dtype_hint": None, "min": "nan", "reduction": "mean"}


@pytest.mark.parametrize("name,value,reason", [
    ("file_name", "../../inductor_cache/kernel.py", "path-like"),
    ("f", "/etc/passwd", "path-like"),
    ("f", "C:\\windows", "path-like"),
    ("output_size", 10**9, "size-like parameter outside ±4096"),
    ("size", [2, 100_000], "size-like parameter outside ±4096"),
    ("alpha", 2**40, "outside ±2.14748e+09"),
    ("alpha", 1e300, "outside ±1e+30"),
    ("alpha", float("inf"), "non-finite"),
    ("pad", [[1, 2], [3, 4]], "a list holding a list"),
    ("dims", list(range(9)), "longer than 8"),
    ("mode", "x" * 65, "longer than 64"),
    ("mode", "rm -rf ~", "neither a known mode name nor a word"),
    ("mode", "torch.load", "neither a known mode name nor a word"),
    ("weights", {"a": 1}, "not a literal"),
    ("__class__", 1, "private parameter name"),
    ("_private", 1, "private parameter name"),
    ("a/b", 1, "not a plain parameter name"),
])
def test_values_outside_the_bounds_are_dropped_with_their_reason(name: str, value: object, reason: str) -> None:
    kept, dropped = check_params({"dim": 1, name: value})
    assert kept == {"dim": 1}
    assert list(dropped) == [name[:64]] and reason in dropped[name[:64]], dropped


def test_values_within_the_bounds_are_kept_as_given() -> None:
    assert check_params(GOOD) == (GOOD, {})


@pytest.mark.parametrize("api,name,value,reason", [
    ("torch.nn.functional.interpolate", "align_corners", "yes", "takes bool, none here, not a string"),
    ("torch.nn.functional.interpolate", "antialias", 1.5, "takes bool here, not a float"),
    ("torch.nn.Conv2d", "padding_mode", "bogus", "not one of ['circular', 'reflect', 'replicate', 'zeros']"),
    ("torch.nn.Conv2d", "bias", 0, "takes bool here, not an integer"),
    ("torch.cumsum", "dim", 1.5, "takes int"),  # an ATen schema: torch.cumsum has no Python signature
    ("torch.cumsum", "dim", "reflect", "takes int"),
])
def test_values_are_typed_from_the_apis_signature(api: str, name: str, value: object, reason: str) -> None:
    kept, dropped = check_params({name: value}, api=api)
    assert kept == {} and reason in dropped[name], dropped


@pytest.mark.parametrize("api,params", [
    ("torch.nn.functional.interpolate", {"align_corners": True, "antialias": False, "mode": "bicubic",
                                         "size": [4, 4], "scale_factor": 2.0}),
    ("torch.nn.Conv2d", {"padding_mode": "reflect", "padding": "same", "kernel_size": [3, 3], "bias": False}),
    ("torch.cumsum", {"dim": "> 0"}),
    ("torch.add", {"alpha": 2, "other": 0.5}),
    ("torch.clamp", {"min": "nan", "max": None}),
])
def test_values_of_the_declared_types_are_kept(api: str, params: dict) -> None:
    assert check_params(params, api=api) == (params, {})


def test_a_name_the_signature_lacks_keeps_the_generic_bounds_only() -> None:
    # transfer maps a pattern's names onto other APIs; the fuzz core places what is left as keywords
    assert check_params({"keepdim": True}, api="torch.cumsum") == ({"keepdim": True}, {})
    assert "path-like" in check_params({"keepdim": "../x"}, api="torch.cumsum").dropped["keepdim"]


def test_at_most_max_params_are_kept() -> None:
    params = {f"p{i}": i for i in range(MAX_PARAMS + 3)}
    kept, dropped = check_params(params)
    assert list(kept) == [f"p{i}" for i in range(MAX_PARAMS)]
    assert set(dropped) == {f"p{i}" for i in range(MAX_PARAMS, MAX_PARAMS + 3)}
    assert all(f"more than {MAX_PARAMS}" in reason for reason in dropped.values())


def test_a_pattern_text_is_parsed_before_it_is_checked() -> None:
    texts = {"dim": "0", "keepdim": "True", "kernel_size": "(3, 3)", "padding": "> 0", "mode": "'reflect'",
             "output_size": "(100000, 2)", "f": "'../../x'"}
    kept, dropped = check_params(texts, as_text=True)
    assert kept == {k: texts[k] for k in ("dim", "keepdim", "kernel_size", "padding", "mode")}  # text kept
    assert set(dropped) == {"output_size", "f"}


def test_a_spec_with_bad_params_is_built_without_them_and_says_why() -> None:
    trigger = {"special_values": ["nan"], "params": {"dim": 0, "file_name": "../../inductor_cache/k.py",
                                                     "n": 10**9, "keepdim": "yes please"}}
    spec = HarnessSpec(api="torch.cumsum", trigger=trigger)
    assert spec.trigger["params"] == {"dim": 0}
    assert set(spec.trigger["dropped_params"]) == {"file_name", "n", "keepdim"}
    assert "path-like" in spec.trigger["dropped_params"]["file_name"]
    assert trigger["params"]["n"] == 10**9  # the caller's dict is not rewritten
    again = HarnessSpec.from_dict(json.loads(spec.to_json()))
    assert again == spec and again.spec_id == spec.spec_id


def test_a_spec_typed_by_signature_drops_a_misfit() -> None:
    spec = HarnessSpec(api="torch.nn.functional.interpolate", trigger={"params": {"align_corners": "yes"}})
    assert spec.trigger["params"] == {} and "bool" in spec.trigger["dropped_params"]["align_corners"]


def test_a_stored_spec_with_params_that_are_not_an_object_is_no_crash() -> None:
    spec = HarnessSpec(api="torch.cumsum", trigger={"params": ["dim", 0]})
    assert spec.trigger["params"] == {} and "params" in spec.trigger["dropped_params"]


def test_only_kept_params_reach_the_call() -> None:
    """The worker's path: the spec's trigger applied to a real seed input, and the call made with torch."""
    spec = HarnessSpec(api="torch.cumsum", trigger={"params": {"dim": 0, "out": "/tmp/x", "n": 10**12}})
    x = torch.arange(6.0).reshape(2, 3)
    [sample] = apply_trigger([Sample((x,), {}, None, "seed")], spec.trigger, seed=0)
    assert sample.kwargs == {"dim": 0}
    assert torch.equal(torch.cumsum(*sample.args, **sample.kwargs), torch.cumsum(x, dim=0))


def test_the_words_nan_and_inf_reach_the_call_as_floats() -> None:
    spec = HarnessSpec(api="torch.clamp", trigger={"params": {"min": "nan", "max": "inf"}})
    [sample] = apply_trigger([Sample((torch.ones(3),), {}, None, "seed")], spec.trigger, seed=0)
    assert math.isnan(sample.kwargs["min"]) and sample.kwargs["max"] == math.inf
