"""A spec cannot name a rejected API, and the worker's resolver reaches torch only by the checked walk."""

from __future__ import annotations

import json
import sys

import pytest

from fuzz_core.spec import HarnessSpec, SpecError
from fuzz_core.target import TargetError, build_target, resolve_qualified
from tests.fuzz_core.api_attacks import ATTACK_APIS


@pytest.mark.parametrize("api", ATTACK_APIS)
@pytest.mark.parametrize("source", ["opinfo", "signature"])
def test_a_spec_naming_a_rejected_api_cannot_be_built(api: str, source: str) -> None:
    with pytest.raises(SpecError, match="rejected"):
        HarnessSpec(api=api, input_source=source)


@pytest.mark.parametrize("api", ATTACK_APIS)
def test_a_stored_spec_naming_a_rejected_api_cannot_be_loaded(api: str) -> None:
    stored = json.loads(HarnessSpec(api="torch.add").to_json())
    stored["api"] = api
    with pytest.raises(SpecError, match="rejected"):
        HarnessSpec.from_dict(stored)


def test_a_code_spec_cannot_pose_as_a_torch_api() -> None:
    with pytest.raises(SpecError, match="re-exported module os"):
        HarnessSpec(api="torch.os.system", input_source="code", code="def target(x):\n    return x\n")


def test_a_code_spec_label_outside_torch_is_never_resolved() -> None:
    spec = HarnessSpec(api="os.system", input_source="code", code="def target(x):\n    return x + 1\n")
    target = build_target(spec.api, spec.code)
    assert target.fn(1) == 2


def test_a_code_spec_without_target_resolves_its_label_through_the_check() -> None:
    with pytest.raises(TargetError, match="os is not torch"):
        build_target("os.system", "X = 1\n")


@pytest.mark.parametrize("api", ATTACK_APIS)
def test_the_resolver_refuses_rejected_names(api: str) -> None:
    with pytest.raises(TargetError, match="rejected"):
        resolve_qualified(api)
    with pytest.raises(TargetError, match="rejected"):
        build_target(api)


def test_the_resolver_imports_no_module_named_by_the_spec() -> None:
    with pytest.raises(TargetError):
        build_target("antigravity.fly")
    with pytest.raises(TargetError):
        build_target("torch.antigravity.fly")
    assert "antigravity" not in sys.modules


def test_the_resolver_still_reaches_public_ops() -> None:
    import torch

    assert build_target("torch.nn.functional.relu6").fn is torch.nn.functional.relu6
    assert build_target("torch.nn.Conv2d").is_module_class
    assert build_target("torch.Tensor.add_").fn is torch.Tensor.add_
