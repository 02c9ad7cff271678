"""Write the standalone repro script: plain torch (+ safetensors), no TransFuzz import; exit 1 when the bug reproduces.

Inert by construction (Note [Inert repros] in fuzz_core/repro_text.py): the script is this
template, literals, dotted names checked as identifiers, and free text in `#` comments; inputs
come from a safetensors file (fuzz_core/saved_inputs.py), never from a pickle. Harness code
given with a spec (trusted, local use) is not pasted in: the script loads it from its own file,
labelled as such.
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import torch

from fuzz_core import saved_inputs
from fuzz_core.custom_functions import CUSTOM_FUNCTION_API, functions_source
from fuzz_core.modes.base import Mode
from fuzz_core.oracles import tolerance
from fuzz_core.oracles.closeness import comparison_source
from fuzz_core.oracles.compare import LOW_PRECISION_ULPS
from fuzz_core.oracles.tolerance import DTYPE_PRECISIONS, SAME_TOL
from fuzz_core.inputs import Sample
from fuzz_core.repro_text import checked_name, comment_lines, literal_source, one_line
from fuzz_core.saved_inputs import INPUTS_FORMAT, UnsavableInput, save_inputs
from fuzz_core.spec import HarnessSpec
from fuzz_core.target import Target

__all__ = ["render_repro", "save_inputs", "UnsavableInput", "HARNESS_FILE_MARKER"]

# The line that names a harness-code file; exporters refuse repros that carry it.
HARNESS_FILE_MARKER = "HARNESS_FILE = "

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


def fp64_rule_fails(ref, res, fp64, rtol, atol):
    """True when res is clearly further from float64 than ref (torch._dynamo.utils.same with fp64_ref)."""
    from torch._dynamo.utils import same
    r, t, f = ref.double(), res.double(), fp64.double()
    finite = torch.isfinite(r) & torch.isfinite(t) & torch.isfinite(f)
    class_eq = lambda a, b: (a.isnan() & b.isnan()) | (a == b)
    mismatch = ~close_enough(r, t, rtol, atol)
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
    try:
        data = load_inputs(INPUTS)
    except Exception as exc:  # exit 1 means "reproduces": a file we cannot read is neither answer
        print(f"cannot load the inputs {INPUTS}: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(2)
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
        # The fuzzer's comparison, as its oracle runs it, through its own close_enough pasted above.
        if LOW_DTYPE is not None and r.is_floating_point() and t.is_floating_point():
            r = r.to(t.dtype)  # the best answer the low dtype can represent
        rtol, atol = tolerance_for(r.dtype, t.dtype)
        as_ref = t.to(r.dtype) if r.dtype != torch.bool else t.bool()
        if r.is_floating_point() or r.is_complex():
            # A few ulps of the low dtype are rounding (composite ops round after every step).
            slack = rounding_slack(r, as_ref, LOW_PRECISION_ULPS) if LOW_DTYPE is not None else 0.0
            close = close_enough(r, as_ref, rtol, atol, slack)
        else:
            close = as_ref == r
        if bool(close.all()):
            continue
        first = torch.nonzero(~close)[0].tolist() if close.dim() else []
        report = (f"{int((~close).sum())} of {close.numel()} elements differ beyond rtol={rtol:g}, atol={atol:g}; "
                  f"first at index {first}: reference {r[tuple(first)].item()!r}, test {t[tuple(first)].item()!r}")
        if not isinstance(f, torch.Tensor) or f.shape != r.shape:
            print(f"beyond tolerance at {path} but no float64 reference to judge it:\\n{report}")
            continue
        if r.is_floating_point() and t.is_floating_point():
            worse = fp64_rule_fails(r, t, f, rtol, atol)
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


def _target_source(target: Target, harness_path: str | None) -> str:
    if target.code:
        if harness_path is None:
            raise ValueError("a spec with harness code needs the path its code was written to")
        return ("# --- harness code: NOT in this script. This spec came with its own Python code (a local,\n"
                "# trusted harness, e.g. from `fuzz api` or a test); it is loaded from the file below.\n"
                "# Read that file before running this script.\n"
                f"{HARNESS_FILE_MARKER}{literal_source(harness_path)}\n\n\n"
                "def make_fn(dtype=None):\n"
                "    import importlib.util\n"
                "    spec = importlib.util.spec_from_file_location('harness_code', HARNESS_FILE)\n"
                "    module = importlib.util.module_from_spec(spec)\n"
                "    module.torch = torch  # harness code runs with torch in scope, as in the fuzzer\n"
                "    sys.modules['harness_code'] = module\n"
                "    spec.loader.exec_module(module)\n"
                "    return module.target\n")
    api = checked_name(target.api)
    if api == CUSTOM_FUNCTION_API:  # the fuzz core's own Functions, the text it ran (Note [Custom autograd Functions])
        return ("# --- the custom autograd Functions under test, written by TransFuzz (not taken from any report);\n"
                "# the input's `function` keyword picks one\n"
                f"{functions_source()}\n\n"
                "def make_fn(dtype=None):\n    return custom_function\n")
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
                f"    return next(op for op in op_db if op.name == {literal_source(str(name))}"
                f" and op.variant_test_name == {literal_source(str(variant))}).op\n")
    if target.is_module_class:
        return ("def make_fn(dtype=None):\n"
                "    ctor = load_inputs(INPUTS)[\"ctor\"] or {}  # constructor kwargs, saved with the inputs\n"
                "    state = torch.random.get_rng_state()\n"
                "    torch.manual_seed(0)\n"
                f"    module = {api}(**ctor).eval().requires_grad_(False)\n"
                "    torch.random.set_rng_state(state)\n"
                "    return module.to(dtype) if dtype is not None else module\n")
    if api.startswith("torch."):
        return f"def make_fn(dtype=None):\n    return {api}\n"
    module_path, _, attr = api.rpartition(".")
    return (f"import importlib\n\n\ndef make_fn(dtype=None):\n"
            f"    return getattr(importlib.import_module({literal_source(module_path)}), {literal_source(attr)})\n")


def _loader_source() -> str:
    """The inputs loader, the same functions the fuzz core tests its saved files with."""
    return (f"INPUTS_FORMAT = {literal_source(INPUTS_FORMAT)}\n\n\n"
            + inspect.getsource(saved_inputs.decode_tree) + "\n\n" + inspect.getsource(saved_inputs.load_inputs))


def _comparison_source() -> str:
    """The comparison as the oracle runs it: its tolerance rule and close_enough, the same functions and not a
    copy (Note [One comparison] in fuzz_core/oracles/closeness.py)."""
    return ("\n# --- the comparison: the fuzzer's own functions, as its oracle runs them (pasted, not imported)\n"
            + inspect.getsource(tolerance.tolerance_for) + "\n\n" + comparison_source(with_slack=True))


def _mode_source(mode: Mode, target: Target, sample: Sample, name: str) -> str:
    source = textwrap.dedent(mode.repro_source(target, sample))
    return source.replace("def run_mode(", f"def {name}(")


def render_repro(spec: HarnessSpec, target: Target, reference: Mode, test: Mode, sample: Sample, inputs_path: str,
                 *, random_op: bool, summary: str, harness_path: str | None = None) -> str:
    """The script's text. Raises ValueError when a name or value cannot be written inertly."""
    checked_name(target.short_name)  # variant modes write it as a method name
    low = repr(test.compute_dtype) if test.compute_dtype is not None else "None"
    about = [
        *comment_lines(f"{spec.api}, {reference.name} vs {test.name} ({spec.kind or spec.oracle})", prefix="API: "),
        *comment_lines(summary, prefix="Finding: "),
        f"# Found with torch {one_line(torch.__version__)}.",
    ]
    header = f'''#!/usr/bin/env python3
"""Standalone repro: plain torch and safetensors; the failing input is in a safetensors file.

Run: python this_file.py [inputs.safetensors]
Exit status 1 with the mismatch printed when the bug reproduces, 0 when it does not, 2 when the
inputs file cannot be read.
Rules: the fuzzer's own comparison, pasted below (close_enough: torch.isclose in float64 with
assert_close's default tolerances, NaN == NaN, a few ulps of slack for float16/bfloat16); a difference
counts only when the test mode is further from a float64 computation than the reference
(torch._dynamo.utils.same with fp64_ref); fallback_random=True and the RNG reseeded before each run of
a random op.
"""
{chr(10).join(about)}
import json
import sys

import torch

INPUTS = sys.argv[1] if len(sys.argv) > 1 else {literal_source(str(inputs_path))}
SEED = {literal_source(int(spec.seed))}
RANDOM = {literal_source(bool(random_op))}
ORACLE = {literal_source(str(spec.oracle))}
LOW_DTYPE = {low}
COMPARES_DTYPE = {literal_source(bool(test.compares_dtype))}
INDEX_OUTPUT = {literal_source(bool(target.returns_indices))}
SIGN_AMBIGUOUS = {literal_source(bool(target.sign_ambiguous))}
LOW_PRECISION_ULPS = {literal_source(LOW_PRECISION_ULPS)}
DTYPE_PRECISIONS = {literal_source(DTYPE_PRECISIONS)}
SAME_TOL = {{{", ".join(f"{k}: {literal_source(v)}" for k, v in SAME_TOL.items())}}}

'''
    parts = [header, _loader_source(), "\n", _target_source(target, harness_path), "\n# --- reference mode",
             _mode_source(reference, target, sample, "run_reference"), "\n# --- test mode",
             _mode_source(test, target, sample, "run_test"), _comparison_source(), _COMPARE]
    script = "\n".join(parts)
    ast.parse(script)  # a template bug must fail here, not in a maintainer's terminal
    return script
