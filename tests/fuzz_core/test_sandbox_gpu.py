"""CUDA through the sandbox (issue 23, item 3).

Without a GPU: the argv builder and the pool's choice of devices on real device nodes made for the test (character
devices with /dev/null's numbers, named like the NVIDIA ones), run through the real bwrap and the real pool. With a
GPU (`cuda` marker): a cpu-vs-cuda harness end to end through the sandboxed pool.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import torch

from fuzz_core import HarnessSpec, WorkerPool
from fuzz_core.sandbox import (GPU_SYS_PATHS, bwrap_command, gpu_binds, gpu_devices, gpu_library_dirs, python_paths,
                               require_bwrap)
from fuzz_core.workers import needs_cuda
from tests.fuzz_core.test_sandbox import REPORT, _spec

NULL = os.makedev(1, 3)


def _fake_dev(root: Path, names: list[str]) -> Path:
    """A folder of character devices with /dev/null's numbers (writing to one is harmless)."""
    if os.geteuid() != 0:
        pytest.skip("making device nodes (mknod) needs root")
    root.mkdir(parents=True, exist_ok=True)
    for name in names:
        os.mknod(root / name, 0o666 | stat.S_IFCHR, NULL)
    return root


def test_gpu_devices_are_the_nvidia_character_nodes_only(tmp_path: Path) -> None:
    dev = _fake_dev(tmp_path / "dev", ["nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "sda"])
    (dev / "nvidia-caps").mkdir()
    (dev / "dri").mkdir()
    (dev / "nvidia-notes").write_text("a regular file is never bound")
    assert [p.name for p in gpu_devices(dev)] == ["nvidia-caps", "nvidia-uvm", "nvidia-uvm-tools", "nvidia0",
                                                  "nvidia1", "nvidiactl"]


def test_no_gpu_without_the_control_node_and_a_gpu_node(tmp_path: Path) -> None:
    assert gpu_devices(_fake_dev(tmp_path / "a", ["nvidia-uvm", "nvidia0"])) == []  # no nvidiactl
    assert gpu_devices(_fake_dev(tmp_path / "b", ["nvidiactl", "nvidia-uvm"])) == []  # no nvidiaN
    assert gpu_devices(tmp_path / "missing") == []


def test_gpu_binds_put_each_node_at_dev_and_the_drivers_sys_read_only(tmp_path: Path) -> None:
    dev = _fake_dev(tmp_path / "dev", ["nvidia0", "nvidiactl"])
    argv = gpu_binds(gpu_devices(dev))
    assert argv[:6] == ["--dev-bind", str(dev / "nvidia0"), "/dev/nvidia0",
                        "--dev-bind", str(dev / "nvidiactl"), "/dev/nvidiactl"]
    assert argv[6:] == [a for path in GPU_SYS_PATHS for a in ("--ro-bind-try", path, path)]
    assert all(path.startswith("/sys/") for path in GPU_SYS_PATHS)  # read-only, never /sys as a whole writable
    assert gpu_binds([]) == []


def test_the_nodes_are_bound_before_dev_turns_read_only(tmp_path: Path) -> None:
    dev = _fake_dev(tmp_path / "dev", ["nvidia0", "nvidiactl"])
    argv = bwrap_command(["true"], writable=[], readonly=[], env={}, cwd=tmp_path, bwrap="bwrap",
                         devices=gpu_devices(dev))
    position = {a: i for i, a in enumerate(argv) if a in ("/dev/nvidia0", "/dev/nvidiactl")}
    assert argv.index("--dev") < min(position.values())
    assert max(position.values()) < argv.index("--remount-ro")  # the first --remount-ro is /dev's
    assert argv[argv.index("--remount-ro") + 1] == "/dev"
    plain = bwrap_command(["true"], writable=[], readonly=[], env={}, cwd=tmp_path, bwrap="bwrap")
    assert not any("nvidia" in a or a.startswith("/sys") for a in plain)  # no GPU asked for: nothing of it


LIST_DEV = "import os, json; print(json.dumps({'dev': sorted(os.listdir('/dev')), 'sys': os.path.isdir('/sys/bus'), " \
           "'write_node': open('/dev/nvidia0', 'w').write('x'), 'new': os.access('/dev', os.W_OK)}))"


def test_bound_nodes_work_inside_the_real_sandbox_and_dev_stays_read_only(tmp_path: Path) -> None:
    dev = _fake_dev(tmp_path / "dev", ["nvidia0", "nvidiactl"])
    argv = bwrap_command([sys.executable, "-c", LIST_DEV], writable=[], readonly=python_paths(),
                         env={"PATH": "/usr/bin"}, cwd=Path(sys.prefix), bwrap=require_bwrap(),
                         devices=gpu_devices(dev))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env={})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert {"nvidia0", "nvidiactl"} <= set(seen["dev"]) and seen["sys"] is True and seen["write_node"] == 1
    assert seen["new"] is False  # /dev itself is still read-only


def test_library_folders_from_ld_library_path_are_driver_folders_only(tmp_path: Path) -> None:
    driver = tmp_path / "nvidia" / "lib64"
    driver.mkdir(parents=True)
    (driver / "libcuda.so.1").write_text("")
    other = tmp_path / "other"
    other.mkdir()
    (other / "libfoo.so").write_text("")
    project = tmp_path / "checkout"
    (project / "lib").mkdir(parents=True)
    (project / "lib" / "libnvidia-ml.so.1").write_text("")
    path = os.pathsep.join(["/", str(Path.home()), str(other), "relative/lib", str(driver), str(driver), str(project),
                            str(project / "lib"), str(tmp_path / "missing")])
    # `project/lib` is inside the checkout but holds only itself, so it may be shown; the checkout itself never
    assert gpu_library_dirs(path, never=[project]) == [driver.resolve(), (project / "lib").resolve()]


def test_which_harnesses_need_cuda() -> None:
    assert needs_cuda(HarnessSpec(api="torch.sin", test_mode="device:cuda"))
    assert needs_cuda(HarnessSpec(api="torch.sin", test_mode="compile:inductor", mode_options={"device": "cuda"}))
    assert not needs_cuda(HarnessSpec(api="torch.sin", test_mode="compile:inductor"))
    assert not needs_cuda(HarnessSpec(api="torch.sin", test_mode="jit.trace"))


DEV_PROBE = REPORT + '''
_report("gpu_@RUN@", {"dev": sorted(os.listdir("/dev")), "ld": os.environ.get("LD_LIBRARY_PATH")})
# @NONCE@
'''


def _dev_inside(pool: WorkerPool, spec: HarnessSpec, run: str) -> list[str]:
    result = pool.submit(spec, max_executions=1).result(timeout=300)
    assert result.verdict in ("passed", "not_applicable"), result.reason
    [report] = pool.root.glob(f"tf_worker*/home/**/probe_gpu_{run}.json")
    return json.loads(report.read_text())["dev"]


def test_a_pool_binds_the_gpu_only_for_a_harness_that_needs_it(tmp_path: Path) -> None:
    # The pool found these nodes as it would find /dev/nvidia*: the real worker argv and the real sandbox.
    devices = gpu_devices(_fake_dev(tmp_path / "dev", ["nvidia0", "nvidiactl"]))
    with WorkerPool(1, task_timeout_s=120, preload_opinfo=False, workdir=tmp_path / "pool") as pool:
        pool.gpu = devices
        cpu = HarnessSpec(**_spec(DEV_PROBE.replace("@RUN@", "cpu").replace("@NONCE@", uuid.uuid4().hex)))
        cuda = HarnessSpec(**_spec(DEV_PROBE.replace("@RUN@", "cuda").replace("@NONCE@", uuid.uuid4().hex),
                                   test_mode="device:cuda"))
        assert not pool.wants_gpu(cpu) and pool.wants_gpu(cuda)
        assert pool.worker_limits(False).memory_mb == 8192 and pool.worker_limits(True).memory_mb is None
        assert "nvidia0" not in _dev_inside(pool, cpu, "cpu")
        assert {"nvidia0", "nvidiactl"} <= set(_dev_inside(pool, cuda, "cuda"))  # restarted with the GPU
        after = HarnessSpec(**_spec(DEV_PROBE.replace("@RUN@", "after").replace("@NONCE@", uuid.uuid4().hex)))
        assert "nvidia0" not in _dev_inside(pool, after, "after")  # ... and without it again
        assert pool._workers[0].started == 3
    never = WorkerPool(1, workdir=tmp_path / "never", cuda=False)
    assert never.gpu == [] and not never.wants_gpu(cuda)


def test_asking_for_cuda_without_a_gpu_is_an_error(tmp_path: Path) -> None:
    if gpu_devices():
        pytest.skip("this machine has NVIDIA device nodes")
    with pytest.raises(ValueError, match="no NVIDIA device nodes"):
        WorkerPool(1, workdir=tmp_path, cuda=True)


@pytest.mark.cuda
def test_a_cpu_vs_cuda_harness_runs_end_to_end_through_the_sandboxed_pool(tmp_path: Path) -> None:
    if not torch.cuda.is_available():
        pytest.skip("torch.cuda.is_available() is False: no CUDA device (or a CPU-only torch) on this machine")
    spec = HarnessSpec(api="torch.sin", reference_mode="eager", test_mode="device:cuda", kind="Device_Mismatch")
    with WorkerPool(1, task_timeout_s=300, workdir=tmp_path) as pool:
        assert pool.gpu and pool.wants_gpu(spec)
        result = pool.submit(spec, max_executions=16).result(timeout=600)
    # Inside the sandbox CUDA worked: the harness ran on the GPU and compared against the CPU.
    assert result.verdict in ("passed", "confirmed", "suspicious"), result.reason
    assert "CUDA is not available" not in result.reason and result.executions >= 1
