"""The one rule for API names: torch's public callables by attribute walk, every rejection named."""

from __future__ import annotations

import os
import sys

import pytest
import torch

from fuzz_core.api_names import ApiRejected, check_api, is_public_api, rejection_reason, resolve_public_api

ATTACKS = {
    "torch.os.system": "re-exported module os",
    "torch.sys.exit": "re-exported module sys",
    "os.system": "not in torch's public namespace",
    "builtins.eval": "not in torch's public namespace",
    "torch.hub.load": "denied: loads, compiles or parses code",
    "torch.load": "denied: loads, compiles or parses code",
    "torch.save": "denied: reads or writes files",
    "torch.utils.cpp_extension.load_inline": "denied: torch.utils tooling",
    "torch.ops.load_library": "denied: loads, compiles or parses code",
    "torch.classes.load_library": "denied: loads, compiles or parses code",
    "torch.Tensor.__reduce_ex__": "private or dunder segment",
    "torch.nn.functional.relu.__globals__": "private or dunder segment",
    "torch._C._jit_pass_inline": "private or dunder segment",
    "torch.jit.load": "denied: loads, compiles or parses code",
    "torch.serialization.load": "denied: loads, compiles or parses code",
    "torch.package.PackageImporter": "denied: loads, compiles or parses code",
    "torch.library.Library": "denied: loads, compiles or parses code",
    "torch.utils.data.DataLoader": "denied: torch.utils tooling",
    "torch.distributed.init_process_group": "denied: starts processes",
    "torch.utils.checkpoint.checkpoint": "denied: torch.utils tooling",
    "torch.profiler.profile": "denied: reads or writes files",
    "torch.backends.cudnn.benchmark": "denied: changes process-wide settings",
    "torch.UntypedStorage.from_file": "denied: reads or writes files",
    "torch.compile": "denied: loads, compiles or parses code",
    "torch.nn.functional.torch.add": "re-exported module torch",
    "torch.nn.functional.Callable": "re-exported object from collections.abc",
    "torch.nn": "not a callable op or module",
    "torch.no_such_op_xyz.sub": "not in torch's public namespace",
    "torch.add; import os": "not a qualified name",
    "": "not a qualified name",
}

LEGITIMATE = ["torch.add", "torch.nn.functional.relu6", "torch.Tensor.add_", "torch.nn.Conv2d", "torch.linalg.svd",
              "torch.fft.rfft", "torch.special.erf", "torch.nn.functional.conv2d", "torch.cumsum"]


@pytest.mark.parametrize("api", sorted(ATTACKS))
def test_attack_names_are_rejected_with_their_reason(api: str) -> None:
    reason = rejection_reason(api)
    assert reason is not None and ATTACKS[api] in reason, reason
    with pytest.raises(ApiRejected) as info:
        check_api(api)
    assert info.value.reason == reason


@pytest.mark.parametrize("api", LEGITIMATE)
def test_public_ops_resolve_to_torch_objects(api: str) -> None:
    obj = resolve_public_api(api)
    walked = torch
    for part in api.split(".")[1:]:
        walked = getattr(walked, part)
    assert obj is walked and is_public_api(api)


def test_opinfo_spellings_resolve_to_the_opinfo_op() -> None:
    # OpInfo calls Tensor.view `torch.view`; the inventory lists it, so it stays fuzzable
    op = resolve_public_api("torch.view")
    assert callable(op) and not hasattr(torch, "view")


def test_check_imports_nothing_named_by_the_input() -> None:
    name = "transfuzz_never_a_module_h2"
    assert rejection_reason(f"torch.{name}.x") is not None
    assert rejection_reason(f"{name}.x") is not None
    assert name not in sys.modules and "antigravity" not in sys.modules
    assert rejection_reason("antigravity.fly") is not None and "antigravity" not in sys.modules


def test_non_string_names_are_rejected_not_crashed() -> None:
    assert rejection_reason(["torch.add"]) == "not a qualified name: a list"
    assert rejection_reason(None) == "not a qualified name: a NoneType"


def test_a_denied_call_is_never_made(tmp_path) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(ApiRejected):
        resolve_public_api("torch.os.system")(f"touch {marker}")
    assert not marker.exists() and os.path.exists(tmp_path)
