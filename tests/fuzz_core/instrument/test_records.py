"""Module, op and kernel records of a small model are complete and point at the NaN's origin."""

from __future__ import annotations

import torch
from torch import nn

from fuzz_core.instrument import KernelRecorder, ModuleRecorder, OpRecorder, run_instrumented


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.act = nn.Tanh()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.fc(x)) + x


class Small(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(4, 6)
        self.block = Block()
        self.out = nn.Linear(6, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.block(torch.relu(self.inp(x))))


def test_module_records_cover_every_module_with_topology_and_stats() -> None:
    torch.manual_seed(0)
    model = Small().eval()
    x = torch.randn(3, 4)
    with torch.no_grad(), ModuleRecorder(model) as rec:
        y = model(x)
    assert {c.name for c in rec.calls} == {name for name, _ in model.named_modules()}
    assert len(rec.calls) == 6
    by_name = {c.name: c for c in rec.calls}
    assert by_name["block.fc"].parent == "block" and by_name["block.fc"].depth == 2
    assert by_name["block"].parent == "" and by_name[""].parent is None
    # Completion order is post-order: children finish before their parent, root last.
    assert [c.name for c in rec.calls] == ["inp", "block.fc", "block.act", "block", "out", ""]
    assert rec.topology()[0] == (None, "")  # the root starts first
    root_stats = by_name[""].output_stats[0]
    assert root_stats.shape == (3, 2) and root_stats.max == float(y.max()) and root_stats.finite
    assert rec.first_nonfinite() is None


def test_op_records_are_the_complete_aten_sequence() -> None:
    torch.manual_seed(0)
    model = Small().eval()
    x = torch.randn(3, 4)
    with torch.no_grad(), OpRecorder() as rec:
        y = model(x)
    ops = [r.op for r in rec.records]
    assert ops == [
        "aten.t.default", "aten.addmm.default", "aten.relu.default",  # inp + relu
        "aten.t.default", "aten.addmm.default", "aten.tanh.default", "aten.add.Tensor",  # block
        "aten.t.default", "aten.addmm.default",  # out
    ]
    last = rec.records[-1]
    assert last.output_shapes == [(3, 2)] and last.input_shapes == [(2,), (3, 6), (6, 2)]
    assert last.output_stats[0].max == float(y.max())
    assert all(r.output_dtypes == ["float32"] for r in rec.records)


def test_first_nonfinite_op_and_module_name_the_origin() -> None:
    class Breaks(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.inner = nn.Sequential(nn.ReLU())

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.inner(self.fc(x))
            return torch.sqrt(h - 100.0) * 0.0  # NaN is born in sqrt, then flows on

    model = Breaks().eval()
    x = torch.ones(1, 2)
    with torch.no_grad(), OpRecorder() as ops:
        model(x)
    with torch.no_grad(), ModuleRecorder(model) as mods:
        model(x)
    first = ops.first_nonfinite()
    assert first is not None and first.op == "aten.sqrt.default"
    assert ops.records[-1].op == "aten.mul.Tensor" and not ops.records[-1].nonfinite_from_finite
    assert mods.first_nonfinite().name == ""  # sqrt lives in the root's own forward


def test_kernel_records_and_levels() -> None:
    model = Small().eval()
    x = torch.randn(3, 4)
    with torch.no_grad(), KernelRecorder(use_cuda=False, model=model) as rec:
        model(x)
    names = {k.name: k for k in rec.kernels}
    assert names["aten::addmm"].count == 3 and names["aten::addmm"].device == "cpu"
    assert rec.elapsed_ms > 0
    # Every module got its own profiler range; a parent's range contains its children's.
    for name in ("<root>", "inp", "block", "block.fc", "block.act", "out"):
        assert names[f"module::{name}"].count == 1
    assert names["module::block"].total_time_us >= names["module::block.fc"].total_time_us
    for level in ("none", "module", "op", "kernel"):
        y, report = run_instrumented(model, (x,), level, model)
        assert y.shape == (3, 2)
        d = report.to_dict()
        assert d["level"] == level
        assert ("modules" in d) == (level == "module") and ("ops" in d) == (level == "op")
        assert ("kernels" in d) == (level == "kernel")


def test_tensor_stats_count_nonfinite_and_summarise_the_rest() -> None:
    from fuzz_core.instrument import tensor_stats

    s = tensor_stats(torch.tensor([1.0, float("nan"), float("inf"), float("-inf"), -2.0]))
    assert (s.finite, s.nan_count, s.inf_count, s.min, s.max, s.abs_max) == (False, 1, 2, -2.0, 1.0, 2.0)
    assert s.mean == -0.5
    clean = tensor_stats(torch.tensor([[1.0, -3.0], [2.0, 0.0]], dtype=torch.float16))
    assert (clean.finite, clean.min, clean.max, clean.abs_max, clean.mean) == (True, -3.0, 2.0, 3.0, 0.0)
    assert tensor_stats(torch.tensor([3, 5])).max == 5.0
    assert tensor_stats(torch.empty(0)).min is None
