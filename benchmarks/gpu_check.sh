#!/usr/bin/env bash
# CUDA through the sandbox, on a GPU machine, in one go (issue 23, item 3); well under 5 minutes.
#
# Runs through the sandboxed WorkerPool (bubblewrap, the same argv as every campaign):
#   1. cpu-vs-cuda harnesses as `make run` makes them (eager on the CPU against device:cuda): torch.sin (honest)
#      and torch.histc (the sample issue's API), with the pool binding the GPU only for them: a CPU harness in
#      the same pool runs in a worker without /dev/nvidia*;
#   2. compile on CUDA: an eager-vs-inductor harness whose inputs live on the GPU (inductor compiles triton
#      kernels inside the sandbox, into the pool's private compile cache);
#   3. a backward on the GPU against the CPU's (grad:device:cuda): a planted GPU-only wrong backward is confirmed;
#   4. the CUDA-event instrumentation: a planted cpu-vs-cuda bug confirmed at instrument level "kernel", whose
#      evidence must hold CUDA kernels and a CUDA-event time.
# Prints one line per check (held / FAILED) and exits 1 if any failed. Without a GPU it says so and exits 0.
#
# Usage: benchmarks/gpu_check.sh            (PYTHON=/path/to/python to choose the interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON="$(command -v python3)"

exec timeout 290 "$PYTHON" - <<'EOF'
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, ".")
import torch

from fuzz_core import HarnessSpec, WorkerPool
from fuzz_core.sandbox import SandboxUnavailable, gpu_devices, require_bwrap

started = time.monotonic()
devices = gpu_devices()
if not devices or not torch.cuda.is_available():
    why = ("no NVIDIA device nodes under /dev" if not devices else
           f"torch {torch.__version__} cannot use CUDA here (torch.cuda.is_available() is False)")
    print(f"gpu_check: no GPU on this machine ({why}); nothing to check.")
    sys.exit(0)
try:
    require_bwrap()
except SandboxUnavailable as exc:
    print(f"gpu_check: FAILED: the sandbox cannot start: {exc}")
    sys.exit(1)
print(f"gpu_check: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; "
      f"bound into the sandbox: {', '.join(p.name for p in devices)}")

results = []


def check(name, held, detail):
    results.append(bool(held))
    print(f"  [{'held' if held else 'FAILED'}] {name}: {detail}", flush=True)


RAN_ON_GPU = ("passed", "confirmed", "suspicious")
DEV_PROBE = '''
import os, json
with open(os.path.join(os.getcwd(), "dev.json"), "w") as f:
    json.dump(sorted(os.listdir("/dev")), f)

def make_inputs(seed):
    return (torch.ones(3),), {}

def target(x):
    return x + 1
'''
COMPILE_ON_CUDA = '''
def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(64, 33, generator=g).cuda(),), {}

def target(x):
    return torch.nn.functional.gelu(x) * torch.sigmoid(x) + x.sum(dim=-1, keepdim=True)
'''
CUDA_BUG = '''
def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(16, 16, generator=g),), {}

def target(x):
    return x * 2 + (1e-2 if x.is_cuda else 0.0)  # planted: wrong on the GPU only
'''
GRAD_CUDA_BUG = '''
class _Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * (2.02 if g.is_cuda else 2.0)  # planted: the GPU's backward is off by 1%

def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(16, 16, generator=g),), {}

def target(x):
    return _Double.apply(x)
'''

with WorkerPool(1, task_timeout_s=180, preload_opinfo=False) as pool:
    for api in ("torch.sin", "torch.histc"):
        spec = HarnessSpec(api=api, reference_mode="eager", test_mode="device:cuda", kind="Device_Mismatch")
        t0 = time.monotonic()
        r = pool.submit(spec, max_executions=16).result()
        check(f"cpu-vs-cuda {api}", r.verdict in RAN_ON_GPU and "CUDA is not available" not in r.reason,
              f"{r.verdict}, {r.executions} executions in {time.monotonic() - t0:.1f} s: {r.reason[:160]}")
    spec = HarnessSpec(api="harness.grad_cuda_bug", input_source="code", code=GRAD_CUDA_BUG, reference_mode="grad",
                       test_mode="grad:device:cuda", kind="Gradient_Mismatch")
    r = pool.submit(spec, max_executions=8).result()
    check("a GPU-only wrong backward (grad:device:cuda against the CPU's autograd)", r.verdict == "confirmed",
          f"{r.verdict}, {r.executions} executions: {r.reason[:160]}")
    r = pool.submit(HarnessSpec(api="harness.dev_probe", input_source="code", code=DEV_PROBE), max_executions=1).result()
    seen = [json.loads(p.read_text()) for p in pool.root.glob("tf_worker*/home/**/dev.json")]
    check("a CPU harness gets no GPU", r.verdict == "passed" and seen and not any("nvidia" in n for n in seen[0]),
          f"{r.verdict}; /dev inside: {' '.join(seen[0]) if seen else '(no report)'}")

with WorkerPool(1, task_timeout_s=240, preload_opinfo=False, cuda=True, instrument="kernel") as pool:
    t0 = time.monotonic()
    spec = HarnessSpec(api="harness.compile_on_cuda", input_source="code", code=COMPILE_ON_CUDA,
                       test_mode="compile:inductor")
    r = pool.submit(spec, max_executions=4).result()
    kernels = [p for p in pool.inductor_cache.rglob("*") if p.suffix in (".cubin", ".ptx", ".hsaco")]
    check("compile on cuda (inductor/triton in the sandbox)", r.verdict == "passed" and kernels,
          f"{r.verdict} in {time.monotonic() - t0:.1f} s, {len(kernels)} GPU kernel files in the pool's cache: "
          f"{r.reason[:160]}")
    spec = HarnessSpec(api="harness.cuda_bug", input_source="code", code=CUDA_BUG, test_mode="device:cuda",
                       kind="Device_Mismatch")
    r = pool.submit(spec, max_executions=8).result()
    report = r.evidence.get("instrumentation") or {}
    on_gpu = [k for k in report.get("kernels", []) if k.get("device") == "cuda"]
    check("CUDA-event instrumentation on a confirmed cpu-vs-cuda finding",
          r.verdict == "confirmed" and on_gpu and float(report.get("elapsed_ms") or 0) > 0,
          f"{r.verdict}; {len(on_gpu)} CUDA kernels recorded ({', '.join(k['name'] for k in on_gpu[:3])}), "
          f"CUDA-event time {report.get('elapsed_ms')} ms; {report.get('error', '')}")

print(f"gpu_check: {sum(results)}/{len(results)} held in {time.monotonic() - started:.0f} s")
sys.exit(0 if all(results) else 1)
EOF
