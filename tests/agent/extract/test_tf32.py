"""Note [TF32 on Ampere] (text.py) and the triage rule that reads it (triage._tf32_rounding).

Reports written for these tests: float32 convolutions and matmuls on CUDA whose results differ from the CPU's in
the fourth digit, on GPUs that run TF32, with and without the code turning TF32 on or off.
"""

from __future__ import annotations

from agent.extract.analyzer import analyze_issue

CONV = ("import torch\nx = torch.randn(1, 3, 16, 16)\nw = torch.randn(8, 3, 3, 3)\n"
        "a = torch.nn.functional.conv2d(x, w)\nb = torch.nn.functional.conv2d(x.cuda(), w.cuda()).cpu()\n"
        "print((a - b).abs().max())\n")
MATMUL = ("import torch\nx = torch.randn(64, 64)\ny = torch.randn(64, 64)\n"
          "print((torch.matmul(x, y) - torch.matmul(x.cuda(), y.cuda()).cpu()).abs().max())\n")


def _report(code: str, env: str) -> str:
    return (f"## 🐛 Bug\n\nThe GPU result differs from the CPU one in the fourth digit.\n\n```python\n{code}```\n\n"
            f"```\ntensor(0.0031)\n```\n\n## Environment\n\n{env}\n")


def test_a_float32_convolution_on_an_ampere_gpu_is_tf32_rounding() -> None:
    a = analyze_issue("conv2d on GPU differs from CPU", _report(CONV, "PyTorch version: 2.1.0\nGPU 0: NVIDIA A100"), [])
    assert a.triage.false_alarm_class == "low_precision" and "TF32" in a.triage.reason


def test_a_matmul_on_an_ampere_gpu_with_a_recent_torch_is_not_blamed_on_tf32() -> None:
    # cuBLAS matmuls stopped using TF32 by default in torch 1.12
    a = analyze_issue("matmul on GPU differs from CPU", _report(MATMUL, "PyTorch version: 2.1.0\nRTX 3090"), [])
    assert a.triage.false_alarm_class is None


def test_a_matmul_with_an_old_torch_on_an_ampere_gpu_is_tf32_rounding() -> None:
    a = analyze_issue("matmul on GPU differs from CPU", _report(MATMUL, "PyTorch version: 1.10.0\nRTX 3090"), [])
    assert a.triage.false_alarm_class == "low_precision"


def test_a_matmul_whose_code_turns_tf32_on_is_tf32_rounding() -> None:
    code = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n" + MATMUL.split("\n", 1)[1]
    a = analyze_issue("matmul on GPU differs from CPU", _report(code, "PyTorch version: 2.1.0"), [])
    assert a.triage.false_alarm_class == "low_precision"


def test_a_convolution_whose_code_turns_tf32_off_is_not_blamed_on_tf32() -> None:
    code = "import torch\ntorch.backends.cudnn.allow_tf32 = False\n" + CONV.split("\n", 1)[1]
    a = analyze_issue("conv2d on GPU differs from CPU", _report(code, "PyTorch version: 2.1.0\nGPU 0: NVIDIA A100"), [])
    assert a.triage.false_alarm_class is None


def test_a_convolution_on_a_gpu_without_tf32_is_not_blamed_on_tf32() -> None:
    a = analyze_issue("conv2d on GPU differs from CPU", _report(CONV, "PyTorch version: 2.1.0\nGPU 0: Tesla V100"), [])
    assert a.triage.false_alarm_class is None


def test_a_large_gap_on_an_ampere_gpu_is_not_blamed_on_tf32() -> None:
    report = _report(CONV, "PyTorch version: 2.1.0\nGPU 0: NVIDIA A100").replace("tensor(0.0031)", "diff: 3.5")
    a = analyze_issue("conv2d on GPU differs from CPU", report, [])
    assert a.triage.false_alarm_class is None
