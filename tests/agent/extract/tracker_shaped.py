"""Reports in the shapes the pytorch/pytorch tracker gives them, written for these tests in our own words.

Each one carries what real reports carry around the repro: the bug template's headings ("## 🐛 Describe the
bug", "### Versions" with a collect_env dump), long tracebacks, printed output blocks, maintainers' comments,
repros split over several blocks or pasted without a fence or with ``>>>`` prompts, and the internal spellings
an op is reached through (torch.ops.aten, torch.library.custom_op, torch.func, torch.export, an nn.Module's
forward, an accelerator device). ``expected`` is (kind, API, test mode) of the pattern the report should give.
No text here comes from a real report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

VERSIONS = """### Versions

Collecting environment information...
PyTorch version: 2.4.1+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.4 LTS (x86_64)
GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0
Clang version: Could not collect
CMake version: version 3.29.2
Libc version: glibc-2.35

Python version: 3.11.9 (main, Apr 19 2024, 16:48:06) [GCC 11.2.0] (64-bit runtime)
Python platform: Linux-6.5.0-41-generic-x86_64-with-glibc2.35
Is CUDA available: True
CUDA runtime version: 12.1.105
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090
Nvidia driver version: 550.54.15

CPU:
Architecture:                         x86_64
CPU op-mode(s):                       32-bit, 64-bit
Model name:                           AMD Ryzen 9 7950X 16-Core Processor
Flags:                                fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov avx512f

Versions of relevant libraries:
[pip3] numpy==1.26.4
[pip3] torch==2.4.1
[pip3] triton==3.0.0
[conda] torch                     2.4.1                    pypi_0    pypi
"""

MAC_VERSIONS = """### Versions

PyTorch version: 2.3.0
Is debug build: False
CUDA used to build PyTorch: None
OS: macOS 14.4.1 (arm64)
Python version: 3.12.2 (main, Feb  6 2024, 20:19:44) [Clang 15.0.0 (clang-1500.1.0.2.5)] (64-bit runtime)
Is CUDA available: False
CPU:
Apple M2 Pro
[pip3] torch==2.3.0
"""


@dataclass
class Report:
    name: str
    title: str
    body: str
    labels: list[str] = field(default_factory=list)
    state: str = "open"
    comments: list[str] = field(default_factory=list)
    state_reason: str | None = None
    expected: tuple[str, str, str] = ("", "", "")

    def raw(self, number: int = 1) -> dict[str, Any]:
        return {"number": number, "title": self.title, "body": self.body, "state": self.state,
                "state_reason": self.state_reason, "labels": [{"name": n} for n in self.labels],
                "comments": [{"body": c} for c in self.comments]}


def _describe(prose: str, code: str, after: str = "", versions: str = VERSIONS) -> str:
    return (f"### 🐛 Describe the bug\n\n{prose}\n\n```python\n{code.strip()}\n```\n\n{after}\n\n{versions}\n\n"
            "cc @ezyang @chauhang @penguinwu")


ATEN_OVERLOAD = Report(
    "aten_overload", "addcmul through the aten overload gives other numbers under torch.compile",
    _describe(
        "Calling the op through its aten overload inside a compiled function does not match eager.",
        """
import torch

def f(a, b, c):
    return torch.ops.aten.addcmul.default(a, b, c, value=0.5)

a, b, c = torch.randn(3, 16), torch.randn(3, 16), torch.randn(3, 16)
eager = f(a, b, c)
compiled = torch.compile(f, backend="inductor")(a, b, c)
print((eager - compiled).abs().max())
""",
        "Output:\n\n```\ntensor(0.0312)\n```"),
    labels=["oncall: pt2", "module: inductor"],
    expected=("Compile_Eager_Mismatch", "torch.addcmul", "compile:inductor"))

CUSTOM_OP = Report(
    "custom_op", "custom_op wrapping logcumsumexp returns wrong values after compile",
    _describe(
        "I registered a custom op with torch.library.custom_op whose body calls logcumsumexp. Eager and compiled "
        "disagree.",
        """
import torch
from torch.library import custom_op

@custom_op("mylib::running_lse", mutates_args=())
def running_lse(x: torch.Tensor) -> torch.Tensor:
    return torch.logcumsumexp(x, dim=-1)

@running_lse.register_fake
def _(x):
    return torch.empty_like(x)

def model(x):
    return running_lse(x) * 2

x = torch.randn(4, 32)
ref = model(x)
out = torch.compile(model)(x)
torch.testing.assert_close(out, ref)
""",
        "```\nAssertionError: Tensor-likes are not close!\n\nMismatched elements: 17 / 128 (13.3%)\n"
        "Greatest absolute difference: 0.0441 at index (2, 30) (up to 1e-05 allowed)\n```"),
    labels=["module: custom-operators", "oncall: pt2"],
    expected=("Compile_Eager_Mismatch", "torch.logcumsumexp", "compile:inductor"))

FUNC_GRAD = Report(
    "func_grad", "torch.func.grad of sinc at zero disagrees with the analytic derivative",
    _describe(
        "The gradient that torch.func.grad returns is not the derivative. Expected 0 at x=0.",
        """
import torch
from torch.func import grad

x = torch.tensor(0.0, dtype=torch.float64)
g = grad(lambda t: torch.sinc(t))(x)
print("func.grad :", g)
print("by hand   :", 0.0)
""",
        "```\nfunc.grad : tensor(0.0312, dtype=torch.float64)\nby hand   : 0.0\n```"),
    labels=["module: functorch", "module: autograd"],
    expected=("Gradient_Mismatch", "torch.sinc", "grad"))

VMAP = Report(
    "vmap", "vmap over cosine_similarity differs from a python loop",
    _describe(
        "When batching with vmap the results do not match running each sample on its own.",
        """
import torch
import torch.nn.functional as F
from torch.func import vmap

a = torch.randn(8, 5)
b = torch.randn(8, 5)
batched = vmap(lambda u, v: F.cosine_similarity(u, v, dim=0))(a, b)
looped = torch.stack([F.cosine_similarity(a[i], b[i], dim=0) for i in range(8)])
print(batched)
print(looped)
print(torch.allclose(batched, looped))
""",
        "prints `False`."),
    labels=["module: vmap", "module: functorch"],
    expected=("Batch_Mismatch", "torch.nn.functional.cosine_similarity", "vmap"))

JACREV = Report(
    "jacrev", "jacrev of logit is off near the clamp bound",
    _describe(
        "torch.func.jacrev of torch.logit with eps gives a jacobian that does not match finite differences.",
        """
import torch
from torch.func import jacrev

x = torch.tensor([1e-7, 0.3, 0.9999999], dtype=torch.float64)
J = jacrev(lambda t: torch.logit(t, eps=1e-6))(x)
h = 1e-8
fd = (torch.logit(x + h, eps=1e-6) - torch.logit(x - h, eps=1e-6)) / (2 * h)
print(torch.diagonal(J))
print(fd)
"""),
    labels=["module: functorch"],
    expected=("Gradient_Mismatch", "torch.logit", "grad"))

EXPORT = Report(
    "export", "exported program gives different output than eager for gelu tanh",
    _describe(
        "After torch.export the module's output changes.",
        """
import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        return torch.nn.functional.gelu(self.proj(x), approximate="tanh")

m = Block().eval()
x = torch.randn(2, 16)
ep = torch.export.export(m, (x,))
print(m(x) - ep.module()(x))
"""),
    labels=["oncall: export"],
    expected=("Compile_Eager_Mismatch", "torch.nn.functional.gelu", "compile:aot_eager"))

MODULE_FORWARD = Report(
    "module_forward", "[inductor] LayerNorm module output drifts under torch.compile",
    "### 🐛 Describe the bug\n\nA small module whose forward normalises its input gives values that do not match "
    "eager once compiled.\n\n```python\nimport torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.w = nn.Parameter(torch.ones(64))\n\n"
    "    def forward(self, x):\n        return nn.functional.layer_norm(x, (64,), self.w, eps=1e-12)\n\n\n"
    "net = Net()\ninp = torch.randn(4, 64) * 1000\nopt = torch.compile(net)\n"
    "print(torch.max(torch.abs(net(inp) - opt(inp))))\n```\n\n### Error logs\n\n```\ntensor(0.0039, "
    "grad_fn=<MaxBackward1>)\n```\n\n" + VERSIONS,
    labels=["oncall: pt2", "module: inductor"], state="closed", state_reason="completed",
    comments=["I can reproduce on main.", "Fixed by #131313, thanks for the report!"],
    expected=("Compile_Eager_Mismatch", "torch.nn.functional.layer_norm", "compile:inductor"))

MPS = Report(
    "mps", "[MPS] cumsum of int64 on mps gives wrong result",
    _describe(
        "On the MPS backend the cumulative sum is not the CPU one.",
        """
import torch

x = torch.arange(1, 2000, dtype=torch.int64)
cpu = x.cumsum(0)
mps = x.to("mps").cumsum(0).cpu()
print(cpu[-3:])
print(mps[-3:])
""",
        "```\ntensor([1995003, 1997001, 1999000])\ntensor([1995003, 1997001, 1998999])\n```",
        versions=MAC_VERSIONS),
    labels=["module: mps", "module: correctness (silent)"],
    expected=("Device_Mismatch", "torch.cumsum", "device:cuda"))

CUDA_METHOD = Report(
    "cuda_method", "CUDA logsumexp returns -inf where cpu gives a finite value",
    "## 🐛 Bug\n\nlogsumexp on the GPU disagrees with the CPU for large negative inputs.\n\n## To Reproduce\n\n"
    "```python\nimport torch as t\n\nv = t.full((3, 5), -1e38)\ngpu = v.cuda().logsumexp(dim=1)\ncpu = v.logsumexp(dim=1)\n"
    "print(cpu, gpu)\n```\n\n## Expected behavior\n\nBoth devices should give the same value.\n\n"
    "## Environment\n\n - PyTorch Version (e.g., 1.0): 1.8.0\n - OS (e.g., Linux): Ubuntu 20.04\n"
    " - How you installed PyTorch (`conda`, `pip`, source): pip\n - CUDA/cuDNN version: 11.1\n",
    labels=["module: cuda", "triaged"],
    expected=("Device_Mismatch", "torch.logsumexp", "device:cuda"))

XPU = Report(
    "xpu", "addmv gives wrong result on XPU",
    _describe(
        "Running torch.addmv on an Intel GPU returns values far from the CPU result.",
        """
import torch
M = torch.randn(64, 32)
vec = torch.randn(32)
bias = torch.randn(64)
ref = torch.addmv(bias, M, vec, beta=0.5, alpha=2.0)
res = torch.addmv(bias.to("xpu"), M.to("xpu"), vec.to("xpu"), beta=0.5, alpha=2.0)
print((ref - res.cpu()).abs().max())
"""),
    labels=["module: xpu", "triaged"],
    expected=("Device_Mismatch", "torch.addmv", "device:cuda"))

TWO_NUMBERS = Report(
    "two_numbers", "var in bfloat16",
    _describe(
        "Hi, when I run the following I get the outputs below.",
        """
import torch
torch.manual_seed(0)
x = torch.randn(10000) + 100
print(torch.var(x))
print(torch.var(x.to(torch.bfloat16)))
""",
        "```\ntensor(1.0032)\ntensor(0., dtype=torch.bfloat16)\n```"),
    expected=("Precision_Mismatch", "torch.var", "dtype:bfloat16"))

CHANNELS_LAST_FIXED = Report(
    "channels_last_fixed", "avg_pool2d with channels_last input gives different output",
    "## 🐛 Bug\n\nThe pooled values change with the memory format.\n\n## To Reproduce\n\n"
    "```python\nimport torch\nimport torch.nn.functional as F\n\nx = torch.randn(2, 3, 9, 9)\n"
    "y1 = F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)\n"
    "y2 = F.avg_pool2d(x.to(memory_format=torch.channels_last), 3, stride=2, padding=1, count_include_pad=False)\n"
    "print((y1 - y2).abs().max())\n```\n\nprints `tensor(0.4121)`\n\n## Expected behavior\n\n"
    "The output should not depend on the memory format.\n\n## Environment\n\nPyTorch 1.9.0, CPU\n",
    labels=["module: memory format", "high priority", "triaged"], state="closed",
    comments=["Confirmed, the channels last kernel ignores count_include_pad.",
              "This was fixed in https://github.com/pytorch/pytorch/pull/99999"],
    expected=("Layout_Mismatch", "torch.nn.functional.avg_pool2d", "layout:channels_last"))

INPLACE = Report(
    "inplace", "clamp_ in place gives a different result than clamp",
    _describe(
        "The in-place variant does not agree with the functional one when min > max.",
        """
import torch
a = torch.linspace(-2, 2, 9)
b = a.clone()
out = torch.clamp(a, min=1.0, max=-1.0)
b.clamp_(min=1.0, max=-1.0)
print(out)
print(b)
"""),
    expected=("Variant_Mismatch", "torch.clamp", "variant:inplace"))

OUT_VARIANT = Report(
    "out_variant", "torch.cumsum with out= on a non-empty buffer is wrong",
    _describe(
        "Passing out= gives other numbers than the returned tensor.",
        """
import torch
x = torch.rand(7, dtype=torch.float64)
buf = torch.empty(7, dtype=torch.float64)
torch.cumsum(x, 0, out=buf)
print(torch.cumsum(x, 0))
print(buf)
"""),
    expected=("Variant_Mismatch", "torch.cumsum", "variant:out"))

JIT_SCRIPT_ABS = Report(
    "jit_script_abs", "torch.jit.script changes the result of remainder",
    _describe(
        "Scripting a function that calls torch.remainder with a negative divisor gives different values.",
        """
import torch

def f(x, y):
    return torch.remainder(x, y)

sf = torch.jit.script(f)
x = torch.randn(100) * 10
y = torch.full((100,), -3.0)
print((f(x, y) - sf(x, y)).abs().max())
"""),
    labels=["oncall: jit"],
    expected=("JIT_Eager_Mismatch", "torch.remainder", "jit.script"))

AUTOCAST = Report(
    "autocast", "bmm under autocast bfloat16 is far from float32",
    _describe(
        "With autocast on CPU the batched matmul loses far more than bfloat16 should.",
        """
import torch
a = torch.randn(4, 64, 64)
b = torch.randn(4, 64, 64)
ref = torch.bmm(a, b)
with torch.autocast("cpu", dtype=torch.bfloat16):
    low = torch.bmm(a, b)
torch.testing.assert_close(low.float(), ref, atol=1e-1, rtol=1e-2)
""",
        "Traceback (most recent call last):\n  File \"/home/me/bmm.py\", line 8, in <module>\n"
        "    torch.testing.assert_close(low.float(), ref, atol=1e-1, rtol=1e-2)\n"
        "  File \"/usr/lib/python3.11/site-packages/torch/testing/_comparison.py\", line 1520, in assert_close\n"
        "    raise error_metas[0].to_error(msg)\nAssertionError: Tensor-likes are not close!\n"),
    labels=["module: amp (automated mixed precision)"],
    expected=("Precision_Mismatch", "torch.bmm", "autocast:bfloat16"))

SPLIT_BLOCKS = Report(
    "split_blocks", "mish gives different values after compile",
    "### 🐛 Describe the bug\n\nFirst the inputs:\n\n```python\nimport torch\nimport torch.nn.functional as F\n\n"
    "x = torch.linspace(-20, 20, 101)\n```\n\nThen compare eager and compiled:\n\n```python\n"
    "eager = F.mish(x)\ncompiled = torch.compile(F.mish, backend=\"aot_eager\")(x)\nprint(eager[:3])\nprint(compiled[:3])\n```\n\n"
    "Output:\n\n```\ntensor([-4.1223e-08, -6.7422e-08, -1.0969e-07])\ntensor([0., 0., 0.])\n```\n\n" + VERSIONS,
    labels=["oncall: pt2"],
    expected=("Compile_Eager_Mismatch", "torch.nn.functional.mish", "compile:aot_eager"))

PROMPTS = Report(
    "prompts", "logsumexp in float16 overflows",
    "## 🐛 Bug\n\n```python\n>>> import torch\n>>> a = torch.tensor([60000.0, 60000.0])\n"
    ">>> torch.logsumexp(a, 0)\ntensor(60000.6914)\n>>> torch.logsumexp(a.half(), 0)\n"
    "tensor(inf, dtype=torch.float16)\n```\n\nThe float16 result should be finite (60000 fits in float16).\n",
    expected=("Precision_Mismatch", "torch.logsumexp", "dtype:float16"))

UNFENCED = Report(
    "unfenced", "kl_div returns nan for zero target",
    "## 🐛 Bug\n\nkl_div gives nan where the target is zero.\n\n## To Reproduce\n\nSteps to reproduce the "
    "behavior:\n\nimport torch\nimport torch.nn.functional as F\ninp = torch.log(torch.tensor([0.5, 0.5]))\n"
    "target = torch.tensor([0.0, 1.0])\nprint(F.kl_div(inp, target, reduction='sum'))\n\n"
    "## Expected behavior\n\nA finite number, 0*log(0) is taken as 0.\n\n## Environment\n\nPyTorch 1.0.1\n",
    labels=["module: nn", "module: NaNs and Infs"],
    expected=("NaN_Inf", "torch.nn.functional.kl_div", "eager"))

RAISES_LATER = Report(
    "raises_later", "compiled softplus differs (repro uses an old helper)",
    _describe(
        "softplus with a large beta disagrees after torch.compile.",
        """
import torch
import torch.nn.functional as F

x = torch.linspace(-1, 1, 50)
fn = lambda t: F.softplus(t, beta=50.0, threshold=1.0)
a = fn(x)
b = torch.compile(fn, backend="aot_eager")(x)
torch.testing.assert_allclose(a, b)
"""),
    labels=["oncall: pt2"],
    expected=("Compile_Eager_Mismatch", "torch.nn.functional.softplus", "compile:aot_eager"))

INDENTED = Report(
    "indented", "grid_sample gives wrong values with align_corners=True",
    "## 🐛 Bug\n\nThe sampled values do not match between devices.\n\n## To Reproduce\n\n"
    "    import torch\n    import torch.nn.functional as F\n    inp = torch.arange(16.).view(1, 1, 4, 4)\n"
    "    grid = torch.zeros(1, 1, 1, 2)\n    out_cpu = F.grid_sample(inp, grid, align_corners=True)\n"
    "    out_gpu = F.grid_sample(inp.cuda(), grid.cuda(), align_corners=True)\n    print(out_cpu, out_gpu)\n\n"
    "## Expected behavior\n\nSame value on both devices.\n\n## Environment\n\n - PyTorch Version (e.g., 1.0): 1.2\n",
    expected=("Device_Mismatch", "torch.nn.functional.grid_sample", "device:cuda"))

DETAILS = Report(
    "details", "[inductor] pixel_shuffle result mismatch",
    "### 🐛 Describe the bug\n\n<details><summary>repro</summary>\n\n```python\nimport torch\n\ndef fn(x):\n"
    "    return torch.nn.functional.pixel_shuffle(x, 2)\n\n"
    "x = torch.randn(1, 8, 3, 3).to(memory_format=torch.channels_last)\nprint(torch.compile(fn)(x).sum(), fn(x).sum())\n"
    "```\n</details>\n\n" + VERSIONS,
    labels=["oncall: pt2"], expected=("Compile_Eager_Mismatch", "torch.nn.functional.pixel_shuffle", "compile:inductor"))

INLINE_OUTPUTS = Report(
    "inline_outputs", "torch.fmod returns different sign under jit.trace",
    "### 🐛 Describe the bug\n\n```python\nimport torch\nf = lambda a: torch.fmod(a, -2.5)\nx = torch.tensor([-7.0, 7.0])\n"
    "tf = torch.jit.trace(f, x)\nprint(f(x))   # tensor([-2.0000,  2.0000])\nprint(tf(x))  # tensor([ 0.5000, -0.5000])\n```"
    "\n\n" + VERSIONS,
    expected=("JIT_Eager_Mismatch", "torch.fmod", "jit.trace"))

ALIASES = Report(
    "aliases", "softmax with bfloat16 input",
    "### 🐛 Describe the bug\n\n```python\nimport torch as t\nfrom torch.nn import functional as Fn\n\n"
    "x = t.randn(2, 5, dtype=t.float64)\na = Fn.softmax(x, dim=1)\nb = Fn.softmax(x.to(t.bfloat16), dim=1)\n"
    "print((a - b.double()).abs().max())\n```\n\n" + VERSIONS,
    expected=("Precision_Mismatch", "torch.nn.functional.softmax", "dtype:bfloat16"))

METHOD_CHAIN = Report(
    "method_chain", "cumprod result on cuda differs from cpu",
    "### 🐛 Describe the bug\n\n```python\nimport torch\nx = torch.rand(100, dtype=torch.float64) + 0.5\n"
    "torch.testing.assert_close(x.cumprod(0), x.cuda().cumprod(0).cpu())\n```\n\n```\n"
    "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 3 / 100 (3.0%)\n"
    "Greatest absolute difference: 1.52587890625e-05 at index (97,) (up to 1e-07 allowed)\n"
    "Greatest relative difference: 2.1e-07 at index (97,) (up to 1e-07 allowed)\n```\n\n" + VERSIONS,
    labels=["module: cuda"], expected=("Device_Mismatch", "torch.cumprod", "device:cuda"))

CLOSED_COMPLETED = Report(
    "closed_completed", "nn.functional.interpolate with antialias=True is off by one pixel",
    "### 🐛 Describe the bug\n\n```python\nimport torch\nimport torch.nn.functional as F\nimg = torch.rand(1, 3, 64, 64)\n"
    "a = F.interpolate(img, size=(17, 17), mode='bilinear', antialias=True)\n"
    "b = F.interpolate(img.contiguous(memory_format=torch.channels_last), size=(17, 17), mode='bilinear', "
    "antialias=True)\nprint(torch.equal(a, b))\nprint(a[0, 0, 0, :4])\nprint(b[0, 0, 0, :4])\n```\n\nprints\n\n```\n"
    "False\ntensor([0.4873, 0.5012, 0.4522, 0.5330])\ntensor([0.4873, 0.5012, 0.4519, 0.5330])\n```\n\n" + VERSIONS,
    state="closed", state_reason="completed",
    expected=("Layout_Mismatch", "torch.nn.functional.interpolate", "layout:channels_last"))

OLD_TEMPLATE = Report(
    "old_template", "torch.nn.functional.normalize backward",
    "## 🐛 Bug\n\n<!-- A clear and concise description of what the bug is. -->\n\n## To Reproduce\n\n"
    "Steps to reproduce the behavior:\n\n```\nimport torch\nx = torch.zeros(3, requires_grad=True)\n"
    "y = torch.nn.functional.normalize(x, dim=0)\ny.sum().backward()\nprint(x.grad)\n```\n\n"
    "```\ntensor([1.0000e+12, 1.0000e+12, 1.0000e+12])\n```\n\n## Expected behavior\n\n"
    "<!-- A clear and concise description of what you expected to happen. -->\n\n"
    "## Environment\n\n - PyTorch Version (e.g., 1.0): 1.4\n",
    expected=("Gradient_Mismatch", "torch.nn.functional.normalize", "grad"))

DYNAMO_OPTIMIZE = Report(
    "dynamo_optimize", "[Inductor] Incorrect result for hardsigmoid",
    _describe("Results mismatch.", """
import torch
import torch._dynamo

def fn(x):
    return torch.nn.functional.hardsigmoid(x) * x

x = torch.randn(10)
opt = torch._dynamo.optimize("inductor")(fn)
print(fn(x))
print(opt(x))
"""), expected=("Compile_Eager_Mismatch", "torch.nn.functional.hardsigmoid", "compile:inductor"))

FUNCTORCH_VMAP = Report(
    "functorch_vmap", "functorch vmap of trace returns wrong values",
    _describe("", """
import torch
from functorch import vmap
x = torch.randn(3, 4, 4)
print(vmap(torch.trace)(x))
print(torch.stack([torch.trace(m) for m in x]))
"""), expected=("Batch_Mismatch", "torch.trace", "vmap"))

GRADCHECK = Report(
    "gradcheck", "gradcheck fails for torch.special.xlog1py",
    _describe("The backward formula looks wrong.", """
import torch
x = torch.rand(5, dtype=torch.double, requires_grad=True)
y = torch.rand(5, dtype=torch.double, requires_grad=True)
torch.autograd.gradcheck(torch.special.xlog1py, (x, y))
""", "```\ntorch.autograd.gradcheck.GradcheckError: Jacobian mismatch for output 0 with respect to input 1,\n"
       "numerical:tensor([[0.5]])\nanalytical:tensor([[0.25]])\n```"),
    expected=("Gradient_Mismatch", "torch.special.xlog1py", "grad"))

COMPILE_MODE = Report(
    "compile_mode", "compiled model gives different output",
    _describe("My model gives different outputs when compiled with max-autotune.", """
import torch
import torch.nn as nn
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()).eval()
x = torch.randn(2, 3, 16, 16)
with torch.no_grad():
    ref = model(x)
    out = torch.compile(model, mode="max-autotune")(x)
print(torch.allclose(ref, out, atol=1e-4))
"""), labels=["oncall: pt2"], expected=("Compile_Eager_Mismatch", "torch.nn.Conv2d", "compile:inductor"))

BOTH_FORMS = Report(
    "both_forms", "x.addcdiv_ gives different result than torch.addcdiv",
    _describe("", """
import torch
a, b, c = torch.rand(4), torch.rand(4), torch.rand(4) + 0.1
r1 = torch.addcdiv(a, b, c, value=3)
a.addcdiv_(b, c, value=3)
print(r1, a)
"""), expected=("Variant_Mismatch", "torch.addcdiv", "variant:inplace"))

# dynamo's own export: a graph of torch calls run as Python, the eager backend's path
DYNAMO_EXPORT = Report(
    "dynamo_export", "BatchNorm2d in a graph from dynamo export uses batch statistics after eval()",
    _describe(
        "The module is in eval mode but the exported graph does not use the running statistics.",
        """
import torch

net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)).eval()
x = torch.randn(2, 3, 8, 8)
graph, guards = torch._dynamo.export(net)(x)
print((net(x) - graph(x)).abs().max())
"""),
    labels=["oncall: pt2"],
    expected=("Compile_Eager_Mismatch", "torch.nn.BatchNorm2d", "compile:eager"))

# a title that names the export tool bare: the tool is not the op, the module the program runs is
EXPORT_TOOL_IN_TITLE = Report(
    "export_tool_in_title", "torch.export program of a group norm gives other values",
    _describe(
        "The exported program's output is off from the module's.",
        """
import torch

norm = torch.nn.GroupNorm(2, 6)
x = torch.randn(3, 6, 5)
program = torch.export.export(norm, (x,))
print((program.module()(x) - norm(x)).abs().max())
"""),
    labels=["oncall: export"],
    expected=("Compile_Eager_Mismatch", "torch.nn.GroupNorm", "compile:aot_eager"))

ALL = [DYNAMO_EXPORT, EXPORT_TOOL_IN_TITLE,
       ATEN_OVERLOAD, CUSTOM_OP, FUNC_GRAD, VMAP, JACREV, EXPORT, MODULE_FORWARD, MPS, CUDA_METHOD, XPU,
       TWO_NUMBERS, CHANNELS_LAST_FIXED, INPLACE, OUT_VARIANT, JIT_SCRIPT_ABS, AUTOCAST, SPLIT_BLOCKS, PROMPTS,
       UNFENCED, RAISES_LATER, INDENTED, DETAILS, INLINE_OUTPUTS, ALIASES, METHOD_CHAIN, CLOSED_COMPLETED,
       OLD_TEMPLATE, DYNAMO_OPTIMIZE, FUNCTORCH_VMAP, GRADCHECK, COMPILE_MODE, BOTH_FORMS]
