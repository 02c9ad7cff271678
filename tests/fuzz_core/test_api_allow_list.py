"""Issue 22: the API check is an allow-list of pure tensor computations, not a deny-list.

Every name below got through the deny-list: each wrote files, compiled or parsed code, forked, or
changed process-wide state (a global forward hook changed an unrelated nn.ReLU6 harness's verdict).
"""

from __future__ import annotations

import pytest
import torch

from fuzz_core.api_names import (NOT_ALLOWED, ApiRejected, allowed_apis, check_api, rejection_reason,
                                 resolve_public_api)

ROUND_TWO_ATTACKS = {
    "torch.PyTorchFileWriter": "reads or writes files",
    "torch.PyTorchFileReader": "reads or writes files",
    "torch.CompilationUnit": "compiles or parses code",
    "torch.import_ir_module": "compiles or parses code",
    "torch.import_ir_module_from_buffer": "compiles or parses code",
    "torch.parse_ir": "compiles or parses code",
    "torch.fork": "forks",
    "torch.nn.modules.module.register_module_forward_hook": "registers hooks",
    "torch.nn.modules.module.register_module_forward_pre_hook": "registers hooks",
    "torch.nn.modules.module.register_module_full_backward_hook": "registers hooks",
    "torch.autograd.set_detect_anomaly": "process-wide settings",
    "torch.distributions.Distribution.set_default_validate_args": "process-wide settings",
    "torch.sparse.check_sparse_tensor_invariants.enable": "process-wide settings",
    "torch.save": "reads or writes files",
    "torch.set_default_dtype": "process-wide settings",
    "torch.manual_seed": "process-wide settings",
    "torch.distributed.all_reduce": "starts processes",
    "torch.jit.script": "compiles or parses code",
    "torch.compile": "compiles or parses code",
    "torch.cuda.set_device": "device runtime",
    "torch.Tensor.register_hook": "registers hooks",
    "torch.Tensor.register_post_accumulate_grad_hook": "registers hooks",
    "torch.Tensor.storage": "storage",
    "torch.Tensor.untyped_storage": "storage",
    "torch.Tensor.share_memory_": "storage",
    "torch.Tensor.apply_": "calls a function",
    "torch.from_numpy": "memory torch does not own",
    "torch.nn.functional.handle_torch_function": "not an op",
}
ORDINARY = ["torch.sin", "torch.nn.functional.gelu", "torch.linalg.svd", "torch.Tensor.add", "torch.nn.ReLU6",
            "torch.einsum", "torch.arange", "torch.special.erf", "torch.fft.rfft", "torch.masked.sum"]


@pytest.mark.parametrize("api", sorted(ROUND_TWO_ATTACKS))
def test_round_two_attack_names_are_refused_with_their_reason(api: str) -> None:
    reason = rejection_reason(api)
    assert reason is not None and ROUND_TWO_ATTACKS[api] in reason, reason
    with pytest.raises(ApiRejected, match="rejected"):
        check_api(api)
    assert api not in allowed_apis()


@pytest.mark.parametrize("api", ORDINARY)
def test_ordinary_tensor_ops_are_allowed_and_resolve_to_torch_objects(api: str) -> None:
    walked = torch
    for part in api.split(".")[1:]:
        walked = getattr(walked, part)
    assert rejection_reason(api) is None and resolve_public_api(api) is walked


@pytest.mark.parametrize("api", ["torch.no_grad", "torch.Generator", "torch.autograd.grad", "torch.nn.Sequential",
                                 "torch.nn.Module", "torch.is_grad_enabled"])
def test_public_callables_that_are_no_tensor_computation_are_off_the_list(api: str) -> None:
    reason = rejection_reason(api)
    assert reason is not None and reason.startswith(NOT_ALLOWED), reason


def test_the_list_holds_no_hook_setter_storage_or_file_name() -> None:
    table = allowed_apis()
    leaves = {name.rsplit(".", 1)[1] for name in table}
    assert not {leaf for leaf in leaves if "hook" in leaf or leaf.startswith(("register_", "set_", "load", "save"))}
    assert not leaves & {"storage", "untyped_storage", "share_memory_", "from_file", "fork", "manual_seed"}
    assert all(name.startswith("torch.") and not any(p.startswith("_") for p in name.split(".")) for name in table)
    assert len(table) > 1000  # the OpInfo/overrides families, not a hand-picked few
