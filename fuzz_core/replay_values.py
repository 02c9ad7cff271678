"""Replay one saved failing input and print, as one JSON object, both modes' outputs and float64 at the worst elements.

Run as a script inside the sandbox (agent/review/replay.py starts it with agent/export/verify.py's
bubblewrap runner): `python -I replay_values.py PACKAGE_ROOT SPEC.json INPUTS.safetensors [OUTPUT_PATH]`.
The spec names a checked torch API (fuzz_core.target resolves it; nothing is imported from a string
outside torch) and the inputs are a safetensors file, so the replay runs the same code a fuzz worker
runs on the same data: its numbers are the ones the repro prints for that input.
"""

from __future__ import annotations

import json
import sys
from typing import Any

WORST = 5


def _value(x: float) -> Any:
    import math

    return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))


def worst_elements(reference: Any, test: Any, fp64: Any, k: int = WORST) -> list[dict[str, Any]]:
    """The k elements where the modes differ most (a NaN against a number counts as infinitely far)."""
    import torch

    r, t = reference.detach().double().reshape(-1), test.detach().double().reshape(-1)
    f = fp64.detach().double().reshape(-1) if fp64 is not None and fp64.numel() == reference.numel() else None
    same = (r == t) | (r.isnan() & t.isnan())
    distance = torch.where(same, 0.0, (t - r).abs().nan_to_num(nan=float("inf"), posinf=float("inf")))
    order = torch.argsort(distance, descending=True, stable=True)[:k]
    rows = []
    for flat in order.tolist():
        if distance[flat] == 0 and rows:
            break
        index = list(torch.unravel_index(torch.tensor(flat), reference.shape)) if reference.dim() else []
        rows.append({"index": [int(i) for i in index], "reference": _value(float(r[flat])),
                     "test": _value(float(t[flat])), "float64": None if f is None else _value(float(f[flat]))})
    return rows


def replay(spec_data: dict[str, Any], inputs_path: str, output_path: str | None) -> dict[str, Any]:
    import torch

    from fuzz_core.campaign import Campaign
    from fuzz_core.execution import execute_fp64
    from fuzz_core.inputs import Sample
    from fuzz_core.saved_inputs import load_inputs
    from fuzz_core.spec import HarnessSpec
    from fuzz_core.tensors import output_leaves

    campaign = Campaign(HarnessSpec.from_dict(spec_data))
    campaign.prepare()
    data = load_inputs(inputs_path)
    sample = campaign.canonical(Sample(tuple(data["args"]), dict(data["kwargs"]), data["ctor"], "saved"))
    run = getattr(campaign, "run_mode", None) or getattr(campaign, "_run")
    ref, test = run(campaign.reference, sample), run(campaign.test, sample)
    fp64 = execute_fp64(campaign.target, sample, reseed=campaign.reseed)
    for name, execution in (("reference", ref), ("test", test)):
        if execution.status != "ok":
            return {"error": f"the {name} mode did not return on this input ({execution.status})"}
    ref_leaves, test_leaves = dict(output_leaves(ref.output)), dict(output_leaves(test.output))
    fp64_leaves = dict(output_leaves(fp64.output)) if fp64.status == "ok" else {}
    path = output_path if output_path in ref_leaves else next(
        (p for p, v in ref_leaves.items() if isinstance(v, torch.Tensor)), None)
    if path is None or not isinstance(test_leaves.get(path), torch.Tensor):
        return {"error": "no tensor output to compare"}
    r, t, f = ref_leaves[path], test_leaves[path], fp64_leaves.get(path)
    if r.shape != t.shape:
        return {"error": f"output {path} has shape {list(r.shape)} vs {list(t.shape)}"}
    return {"output": path, "reference_mode": campaign.reference.name, "test_mode": campaign.test.name,
            "output_dtype": str(t.dtype).removeprefix("torch."), "shape": list(r.shape),
            "worst": worst_elements(r, t, f if isinstance(f, torch.Tensor) else None)}


def main(argv: list[str]) -> int:
    package_root, spec_path, inputs_path = argv[1], argv[2], argv[3]
    sys.path.insert(0, package_root)
    output_path = argv[4] if len(argv) > 4 else None
    with open(spec_path, encoding="utf-8") as handle:
        spec_data = json.load(handle)
    try:
        result = replay(spec_data, inputs_path, output_path)
    except Exception as exc:  # reported to the reader as the replay's outcome, never a crash of review show
        result = {"error": f"{type(exc).__name__}: {exc}"}
    print("REPLAY " + json.dumps(result, allow_nan=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
