"""Write the standalone repro script: plain torch, no TransFuzz import; exit 1 when the bug reproduces."""

from __future__ import annotations

import textwrap
from typing import Any

import torch

from fuzz_core.modes.base import Mode
from fuzz_core.oracles.compare import LOW_PRECISION_ULPS
from fuzz_core.oracles.tolerance import SAME_TOL
from fuzz_core.inputs import Sample
from fuzz_core.spec import HarnessSpec
from fuzz_core.target import Target

_COMPARE = '''
def leaves(out, path=""):
    """(path, leaf) pairs; namedtuple fields keep their names."""
    if isinstance(out, tuple) and hasattr(out, "_fields"):
        return [x for name, v in zip(out._fields, out) for x in leaves(v, f"{path}.{name}" if path else name)]
    if isinstance(out, (list, tuple)):
        return [x for i, v in enumerate(out) for x in leaves(v, f"{path}[{i}]")]
    return [(path or "out", out)]


def to64(tree):
    def cast(t):
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            return t.to(torch.float64)
        if isinstance(t, torch.Tensor) and t.is_complex():
            return t.to(torch.complex128)
        return t
    return torch.utils._pytree.tree_map(cast, tree)


def clone(tree):
    return torch.utils._pytree.tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, tree)


def run(runner, fn, args, kwargs):
    args, kwargs = clone((args, kwargs))
    if RANDOM:
        torch.manual_seed(SEED)
    with torch.no_grad():
        out = runner(fn, args, kwargs)
    if SIGN_AMBIGUOUS:  # singular/eigen vectors are defined up to sign: compare magnitudes
        out = torch.utils._pytree.tree_map(
            lambda t: t.abs() if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex()) else t, out)
    return out


def has_ties(tensors):
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.numel() > 1:
            return torch.unique(t.reshape(-1)).numel() < t.numel()
    return False


def fp64_rule_fails(ref, res, fp64):
    """True when res is clearly further from float64 than ref (torch._dynamo.utils.same with fp64_ref)."""
    from torch._dynamo.utils import same
    r, t, f = ref.double(), res.double(), fp64.double()
    finite = torch.isfinite(r) & torch.isfinite(t) & torch.isfinite(f)
    rtol, atol = TOLERANCE.get(res.dtype, (0.0, 0.0))
    class_eq = lambda a, b: (a.isnan() & b.isnan()) | (a == b)
    mismatch = ~(class_eq(r, t) | ((t - r).abs() <= atol + rtol * r.abs()))
    bad_nonfinite = mismatch & ~finite
    if bad_nonfinite.any():
        near = lambda x: class_eq(x, f) | (torch.isfinite(x) & torch.isfinite(f) & ((x - f).abs() <= atol + 10 * rtol * f.abs()))
        if (near(r)[bad_nonfinite] & ~near(t)[bad_nonfinite]).any():
            print("NaN/Inf where the float64 result sides with the reference")
            return True
    if (mismatch & finite).any():
        work = res.dtype if res.dtype in (torch.float16, torch.bfloat16) else ref.dtype
        ok = same(ref[finite].to(work), res[finite].to(work), fp64_ref=f[finite], tol=SAME_TOL.get(work, 1e-4),
                  equal_nan=True, log_error=lambda *a, **k: None)
        rmse = lambda a: torch.sqrt(torch.mean(torch.square(a[finite].double() - f[finite]))).item()
        print(f"rmse vs float64: reference {rmse(r):.6g}, test {rmse(t):.6g}")
        return not ok
    return False


def main():
    status = check()
    if status == 0 and globals().get("RETRY_DYNAMIC"):
        global COMPILE_DYNAMIC
        print("retrying with torch.compile(dynamic=True): the fuzzer's compiled callable had seen other shapes")
        torch._dynamo.reset()
        COMPILE_DYNAMIC = True
        status = check()
    return status


def check():
    data = torch.load(INPUTS, weights_only=False)
    args, kwargs = data["args"], data["kwargs"]
    fn = make_fn()
    try:
        ref = run(run_reference, fn, args, kwargs)
    except Exception as exc:
        print(f"reference raised ({type(exc).__name__}: {exc}); the input is outside the API's domain")
        return 0
    try:
        res = run(run_test, fn, args, kwargs)
    except Exception as exc:
        print(f"MISMATCH: the test mode raises where the reference returns: {type(exc).__name__}: {exc}")
        return 1
    if ORACLE in ("exception", "crash"):
        print("both modes return; no exception mismatch")
        return 0
    try:
        fp64_args, fp64_kwargs = to64((args, kwargs))
        fp64 = run(run_reference, make_fn(torch.float64), fp64_args, fp64_kwargs)
        fp64_leaves = dict(leaves(fp64))
    except Exception as exc:
        print(f"no float64 reference: {exc}")
        fp64_leaves = {}
    failed = False
    ref_leaves, res_leaves = leaves(ref), leaves(res)
    if [p for p, _ in ref_leaves] != [p for p, _ in res_leaves]:
        print(f"MISMATCH: output structure {[p for p, _ in ref_leaves]} vs {[p for p, _ in res_leaves]}")
        return 1
    flat_inputs = [t for t in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
    for (path, r), (_, t) in zip(ref_leaves, res_leaves):
        if not isinstance(r, torch.Tensor):
            if r != t and not (r != r and t != t):
                print(f"MISMATCH at {path}: {r!r} vs {t!r}")
                failed = True
            continue
        f = fp64_leaves.get(path)
        if ORACLE == "nan_inf":
            if isinstance(f, torch.Tensor) and (t.is_floating_point() or t.is_complex()):
                limit = torch.finfo(t.dtype).max if t.is_floating_point() else torch.finfo(torch.float32).max
                bad = ~torch.isfinite(t) & torch.isfinite(f) & (f.abs() <= limit)
                if bad.any():
                    print(f"MISMATCH at {path}: {int(bad.sum())} NaN/Inf where float64 is finite, "
                          f"first at {torch.nonzero(bad)[0].tolist()}")
                    failed = True
            continue
        if r.shape != t.shape:
            print(f"MISMATCH at {path}: shape {tuple(r.shape)} vs {tuple(t.shape)}")
            failed = True
            continue
        if COMPARES_DTYPE and r.dtype != t.dtype:
            print(f"MISMATCH at {path}: dtype {r.dtype} vs {t.dtype}")
            failed = True
            continue
        if ORACLE == "shape_dtype":
            continue
        is_index = not (r.is_floating_point() or r.is_complex() or r.dtype == torch.bool) and (
            "indices" in path or INDEX_OUTPUT)
        if is_index and has_ties(flat_inputs):
            continue
        if LOW_DTYPE is not None and r.is_floating_point() and t.is_floating_point():
            r = r.to(t.dtype)
            # A few ulps of the low dtype are rounding (composite ops round after every step).
            mag = torch.maximum(r.abs(), t.abs())
            ulp = torch.nextafter(mag, torch.full_like(mag, float("inf"))) - mag
            same_class = (r.isnan() & t.isnan()) | (r == t)
            if bool((same_class | ((t.double() - r.double()).abs() <= LOW_PRECISION_ULPS * ulp.double())).all()):
                continue
        try:
            torch.testing.assert_close(t, r.to(t.dtype), equal_nan=True, check_dtype=False, check_stride=False)
            continue
        except AssertionError as exc:
            report = str(exc)
        if not isinstance(f, torch.Tensor) or f.shape != r.shape:
            print(f"beyond tolerance at {path} but no float64 reference to judge it:\\n{report}")
            continue
        if r.is_floating_point() and t.is_floating_point():
            worse = fp64_rule_fails(r, t, f)
        else:
            bad = t.to(torch.int64) != r.to(torch.int64)
            worse = bool((f.to(torch.int64) == r.to(torch.int64))[bad].all())
        if worse:
            print(f"MISMATCH at {path}:\\n{report}")
            failed = True
        else:
            print(f"{path}: beyond tolerance, but the test mode is as close to float64 as the reference (not a bug)")
    if failed:
        return 1
    print("no mismatch: the bug does not reproduce")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def _target_source(target: Target, sample: Sample) -> str:
    if target.code:
        return (f"# --- harness code\n{target.code.rstrip()}\n\n\n"
                "def make_fn(dtype=None):\n    return target\n")
    if target.opinfo_call is not None:
        name, variant = target.opinfo_call
        return ("def make_fn(dtype=None):\n"
                "    # The samples follow OpInfo's calling convention for this op; call its function variant.\n"
                "    import sys\n"
                "    from torch.testing._internal.common_methods_invocations import op_db\n"
                "    # OpInfo's wrapper_set_seed reseeds inside random ops; call them plainly (as PyTorch's\n"
                "    # inductor OpInfo test does) and let RANDOM/SEED above control the RNG.\n"
                "    for name, module in list(sys.modules.items()):\n"
                "        if name.startswith('torch.testing._internal') and hasattr(module, 'wrapper_set_seed'):\n"
                "            module.wrapper_set_seed = lambda op, *a, **k: op(*a, **k)\n"
                f"    return next(op for op in op_db if op.name == {name!r} and op.variant_test_name == {variant!r}).op\n")
    if target.is_module_class:
        return (f"CTOR = {sample.ctor!r}\n\n\n"
                "def make_fn(dtype=None):\n"
                "    state = torch.random.get_rng_state()\n"
                "    torch.manual_seed(0)\n"
                f"    module = {target.api}(**CTOR).eval().requires_grad_(False)\n"
                "    torch.random.set_rng_state(state)\n"
                "    return module.to(dtype) if dtype is not None else module\n")
    if target.api.startswith("torch."):
        return f"def make_fn(dtype=None):\n    return {target.api}\n"
    module_path, _, attr = target.api.rpartition(".")
    return (f"import importlib\n\n\ndef make_fn(dtype=None):\n"
            f"    return getattr(importlib.import_module({module_path!r}), {attr!r})\n")


def _mode_source(mode: Mode, target: Target, sample: Sample, name: str) -> str:
    source = textwrap.dedent(mode.repro_source(target, sample))
    return source.replace("def run_mode(", f"def {name}(")


def render_repro(spec: HarnessSpec, target: Target, reference: Mode, test: Mode, sample: Sample, inputs_path: str,
                 *, random_op: bool, summary: str) -> str:
    low = repr(test.compute_dtype) if test.compute_dtype is not None else "None"
    tolerance = {str(k): v for k, v in {
        torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
        torch.float64: (1e-7, 1e-7)}.items()}
    header = f'''#!/usr/bin/env python3
"""Repro: {spec.api}, {reference.name} vs {test.name} ({spec.kind or spec.oracle}).

{summary}

Run: python this_file.py [inputs.pt]  (plain torch; no TransFuzz import)
Exit status 1 with the mismatch printed when the bug reproduces, 0 when it does not.
Rules: default assert_close tolerances (NaN == NaN); a difference counts only when the test mode is
further from a float64 computation than the reference (torch._dynamo.utils.same with fp64_ref);
fallback_random=True and the RNG reseeded before each run of a random op.
Found with torch {torch.__version__}.
"""
import sys

import torch

INPUTS = sys.argv[1] if len(sys.argv) > 1 else {inputs_path!r}
SEED = {spec.seed}
RANDOM = {random_op}
ORACLE = {spec.oracle!r}
LOW_DTYPE = {low}
COMPARES_DTYPE = {test.compares_dtype}
INDEX_OUTPUT = {target.returns_indices}
SIGN_AMBIGUOUS = {target.sign_ambiguous}
LOW_PRECISION_ULPS = {LOW_PRECISION_ULPS}
TOLERANCE = {{torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
             torch.float64: (1e-7, 1e-7)}}
SAME_TOL = {{{", ".join(f"{k}: {v}" for k, v in SAME_TOL.items())}}}

'''
    del tolerance
    parts = [header, _target_source(target, sample), "\n# --- reference mode",
             _mode_source(reference, target, sample, "run_reference"), "\n# --- test mode",
             _mode_source(test, target, sample, "run_test"), _COMPARE]
    return "\n".join(parts)


def save_inputs(sample: Sample, path: str) -> None:
    data: dict[str, Any] = {"args": sample.args, "kwargs": sample.kwargs, "ctor": sample.ctor}
    torch.save(data, path)
