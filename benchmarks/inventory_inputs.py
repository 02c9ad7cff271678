#!/usr/bin/env python3
"""Inventory input coverage: the fraction of inventory APIs for which a valid (eager-accepted) input is built.

Before: today's builders as the harness stage picks them (OpInfo for OpInfo names, else the
signature/docstring builder). After: OpInfo for OpInfo names, else fuzz_core.inputs.inventory
(per-op argument rules, OpInfo variants and aliases, signature, ATen schemas with other dtypes and sparse layouts, module
constructors and multi-input forwards). Both run in the same child processes, API by API; a child
that dies (a kernel corrupting memory on a builder's guess) is restarted after that API, which counts
as `crash` for the builder that was running.

Usage: python benchmarks/inventory_inputs.py [--limit N] [--time-limit S]
Prints counted reasons for the APIs without an input, before and after; the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# API families that cannot get a CPU input whatever the builder does, and why (for the reason counts).
_FAMILIES: tuple[tuple[str, str], ...] = (
    (r"(^|\.)(cudnn|miopen)_|\.(cuda|ipu|mtia|xpu|pin_memory|record_stream|is_pinned)$|"
     r"\.batch_norm_(stats|elemt|gather_stats\w*|backward_\w+)$", "device- or backend-specific"),
    (r"\.(fbgemm_linear_\w+|fbgemm_pack_\w+|quantized_(lstm|gru)\w*|quantized_rnn_\w+|mkldnn_rnn_layer)$",
     "opaque packed weights (lost when an input is copied)"),
    (r"\.(sym_\w+|cond|while_loop|fork|wait|parse_ir|parse_schema|import_ir_module\w*|merge_type_from_type_comment|"
     r"parse_type_comment|unify_type_list)$", "tracing/TorchScript machinery, not an op"),
    (r"\.nn\.(Container|DataParallel|ModuleDict|ModuleList|ParameterDict|ParameterList|RNNBase|RNNCellBase|"
     r"TransformerDecoder|TransformerEncoder)$", "container or wrapper module (no forward, or a module argument)"),
    (r"quantiz|\.q_|int_repr|dequantize|qscheme|fake_quant|choose_qparams", "needs quantized tensors"),
    (r"\.(eig|symeig|lstsq|solve|matrix_rank)$", "removed API (raises by design)"),
    (r"hook|backward$|retain_grad|reinforce|\.(register_|apply_|map_|map2_)", "autograd/callback plumbing"),
)


def family_reason(api: str) -> str | None:
    for pattern, reason in _FAMILIES:
        if re.search(pattern, api):
            return reason
    return None


def reason_of(api: str, error: str) -> str:
    family = family_reason(api)
    if family is not None:
        return family
    if error in ("crash", "timeout"):
        return error
    if "accepts none of OpInfo" in error or "OpInfo says" in error:
        return "OpInfo samples rejected by this variant"
    if "ATen schemas" in error or "from its signature" in error:
        return "no built candidate runs (arguments need semantics)"
    if "constructor" in error:
        return "module constructor/forward not satisfied"
    return error.split(":", 1)[0][:60] or "unknown"


# ---- child: evaluate APIs from a start index, one JSON line per API -----------------------------
def child(names: list[str], start: int, max_samples: int) -> None:
    import signal
    import warnings

    warnings.filterwarnings("ignore")
    import torch

    from fuzz_core.campaign import build_target_for
    from fuzz_core.inputs import NoInputs
    from fuzz_core.inputs.inventory import inventory_samples, opinfo_any_dtype
    from fuzz_core.inputs.opinfo import opinfo_samples
    from fuzz_core.inputs.signature import signature_samples
    from fuzz_core.spec import HarnessSpec

    in_opinfo = set(json.loads(sys.stdin.readline()))

    def alarm(*_: object) -> None:
        raise TimeoutError("timeout")

    signal.signal(signal.SIGALRM, alarm)

    def attempt(build) -> str:  # type: ignore[no-untyped-def]
        signal.alarm(20)
        try:
            build()
            return ""
        except TimeoutError:
            return "timeout"
        except Exception as exc:  # noqa: BLE001 - each failure is a counted reason
            return f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
        finally:
            signal.alarm(0)

    for index in range(start, len(names)):
        api = names[index]
        spec_holder: dict[str, object] = {}

        def target():  # type: ignore[no-untyped-def]
            if "target" not in spec_holder:
                spec = HarnessSpec(api=api, input_source="opinfo" if api in in_opinfo else "signature",
                                   max_samples=max_samples)
                spec_holder["target"] = build_target_for(spec)
            return spec_holder["target"]

        def before() -> None:
            t = target()
            if t.opinfo is not None:
                opinfo_samples(api, torch.float32, max_samples)
            else:
                signature_samples(t, torch.float32, 0, max_samples)

        def after() -> None:
            t = target()
            if t.opinfo is not None:
                try:
                    opinfo_any_dtype(api, torch.float32, max_samples)
                except NoInputs:
                    inventory_samples(t, torch.float32, 0, max_samples)
            else:
                inventory_samples(t, torch.float32, 0, max_samples)

        print(json.dumps({"i": index, "phase": "before"}), flush=True)
        before_error = attempt(before)
        print(json.dumps({"i": index, "phase": "after"}), flush=True)
        after_error = attempt(after)
        print(json.dumps({"i": index, "api": api, "before": before_error, "after": after_error}), flush=True)


# ---- parent ---------------------------------------------------------------------------------------
def run_all(names: list[str], in_opinfo: set[str], max_samples: int, deadline: float) -> dict[str, dict[str, str]]:
    results: dict[str, dict[str, str]] = {}
    start = 0
    while start < len(names) and time.monotonic() < deadline:
        proc = subprocess.Popen([sys.executable, __file__, "--child", str(start), "--max-samples", str(max_samples)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                cwd=ROOT)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(sorted(in_opinfo)) + "\n")
        proc.stdin.flush()
        proc.stdin.close()
        phase: tuple[int, str] = (start, "before")
        for line in proc.stdout:
            record = json.loads(line)
            if "phase" in record:
                phase = (record["i"], record["phase"])
            else:
                results[record["api"]] = {"before": record["before"], "after": record["after"]}
            if time.monotonic() >= deadline:
                proc.kill()
                break
        proc.wait()
        index, running = phase
        if index < len(names) and names[index] not in results and time.monotonic() < deadline:
            # The child died inside `running`: that builder crashed; the other one never ran or passed.
            results[names[index]] = {"before": "crash", "after": "crash"} if running == "before" else \
                {"before": "", "after": "crash"}
        start = index + 1
    return results


def summarise(results: dict[str, dict[str, str]], which: str) -> tuple[float, Counter]:
    built = sum(1 for r in results.values() if not r[which])
    reasons = Counter(reason_of(api, r[which]) for api, r in results.items() if r[which])
    return built / max(1, len(results)), reasons


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, default=None, help="only the first N inventory APIs (smoke runs)")
    parser.add_argument("--max-samples", type=int, default=2)
    parser.add_argument("--time-limit", type=float, default=1800.0)
    parser.add_argument("--failures", type=Path, default=None, help="write each API's failure texts here (JSON)")
    args = parser.parse_args()

    from agent.inventory.enumerate import enumerate_api

    entries = enumerate_api()[: args.limit]
    names = [e.api for e in entries]
    if args.child is not None:
        child(names, args.child, args.max_samples)
        return
    started = time.monotonic()
    results = run_all(names, {e.api for e in entries if e.in_opinfo}, args.max_samples,
                      started + args.time_limit)
    before, before_reasons = summarise(results, "before")
    after, after_reasons = summarise(results, "after")
    for label, fraction, reasons in (("before", before, before_reasons), ("after", after, after_reasons)):
        print(f"{label}: valid input for {fraction:.3f} of {len(results)} inventory APIs; without one:")
        for reason, count in reasons.most_common():
            print(f"  {count:5d}  {reason}")
    # Also shown, never the target: the fraction among APIs that can run on this CPU build at all.
    device_only = after_reasons.get("device- or backend-specific", 0)
    cpu_possible = after * len(results) / max(1, len(results) - device_only)
    print(f"after, without the {device_only} device-only APIs: {cpu_possible:.3f}")
    if args.failures is not None:
        args.failures.write_text(json.dumps(results, indent=1, sort_keys=True))
    print(json.dumps({"apis": len(results), "inventory": len(names), "before": round(before, 4),
                      "after": round(after, 4), "after_cpu_possible": round(cpu_possible, 4), "ratio": round(after / before, 3) if before else None,
                      "target": 0.95, "seconds": round(time.monotonic() - started, 1),
                      "after_reasons": dict(after_reasons.most_common())}))


if __name__ == "__main__":
    main()
