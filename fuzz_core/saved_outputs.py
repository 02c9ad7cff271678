"""Save a value or NaN/Inf finding's three outputs (reference mode, test mode, float64) at the differing leaf; load them back.

Why: a reviewer judges a precision or compile finding best from the error of each mode against
float64 per element (the review page's plot, Note [Error plot data] in agent/web/plots.py), and the
worker is the one place where those tensors exist. They are recomputed once per harness result on
the finding's input, with the same executions the confirmation checks use (``Campaign.run_mode``,
``execute_fp64``), and written as safetensors next to the saved input: raw tensors and a JSON
header, nothing that runs code when read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from fuzz_core.campaign import Campaign
from fuzz_core.execution import execute_fp64
from fuzz_core.inputs import Sample
from fuzz_core.tensors import output_leaves

OUTPUT_KEYS = ("reference", "test", "fp64")
OUTPUTS_FORMAT = "transfuzz-outputs-1"
MAX_SAVED_ELEMENTS = 4_000_000  # per tensor; a larger output is described, not saved
_SAVABLE = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
            torch.int64, torch.uint8, torch.bool)


def mode_outputs(campaign: Campaign, sample: Sample, leaf: str) -> dict[str, torch.Tensor] | str:
    """{reference, test, fp64} tensors of output leaf ``leaf`` on ``sample``, or why there are none."""
    assert campaign.target is not None and campaign.reference is not None and campaign.test is not None
    runs = {
        "reference": campaign.run_mode(campaign.reference, sample),
        "test": campaign.run_mode(campaign.test, sample),
        "fp64": campaign.gauge_free(execute_fp64(campaign.target, sample, reseed=campaign.reseed, mode=campaign.test)),
    }
    tensors: dict[str, torch.Tensor] = {}
    for name, run in runs.items():
        if run.status != "ok":
            return f"the {name} run did not return on this input ({run.status})"
        value = dict(output_leaves(run.output)).get(leaf)
        if not isinstance(value, torch.Tensor):
            return f"output {leaf!r} of the {name} run is not a tensor"
        tensors[name] = value
    shapes = {tuple(t.shape) for t in tensors.values()}
    if len(shapes) != 1:
        return f"output {leaf!r} has different shapes across the runs: {sorted(shapes)}"
    return tensors


def save_outputs(tensors: dict[str, torch.Tensor], path: Path, leaf: str) -> str | None:
    """Write the tensors as one safetensors file; None when written, else why not (nothing is written then)."""
    from safetensors.torch import save_file

    for name, tensor in tensors.items():
        if tensor.dtype not in _SAVABLE:
            return f"output dtype {tensor.dtype} is not saved"
        if tensor.numel() > MAX_SAVED_ELEMENTS:
            return f"output has {tensor.numel()} elements, more than the {MAX_SAVED_ELEMENTS} saved"
    plain = {name: t.detach().to("cpu").contiguous().clone() for name, t in tensors.items()}
    save_file(plain, str(path), metadata={"format": OUTPUTS_FORMAT, "output": leaf})
    return None


def finding_outputs_evidence(campaign: Campaign, sample: Sample, leaf: str, path: Path) -> dict[str, Any]:
    """Evidence keys: ``outputs_path`` when saved, else ``outputs_skipped`` with the reason (never raises)."""
    try:
        tensors = mode_outputs(campaign, sample, leaf)
        reason = tensors if isinstance(tensors, str) else save_outputs(tensors, path, leaf)
    except Exception as exc:  # evidence, not a verdict: say why the outputs are missing
        reason = f"{type(exc).__name__}: {str(exc)[:300]}"
    return {"outputs_skipped": reason} if reason is not None else {"outputs_path": str(path)}


# The parent reads these files from a worker's folder, which the sandboxed worker could write: they are read
# as regular files inside that folder, never through a link, and size-capped (fuzz_core/safe_files.py).

def _read(path: str) -> tuple[dict[str, str], bytes]:
    from fuzz_core.safe_files import read_regular
    from fuzz_core.saved_inputs import safetensors_metadata

    data = read_regular(path)
    return safetensors_metadata(data), data


def is_outputs_file(path: str) -> bool:
    """True for a file save_outputs wrote (a regular file in its worker's folder; checks the header only)."""
    try:
        metadata, data = _read(path)
        length = int.from_bytes(data[:8], "little")
        keys = set(json.loads(data[8:8 + length])) - {"__metadata__"}
    except (OSError, ValueError):
        return False
    return metadata.get("format") == OUTPUTS_FORMAT and keys == set(OUTPUT_KEYS)


def load_outputs(path: str) -> dict[str, torch.Tensor]:
    """The three tensors of a file written by save_outputs; ValueError (UnsafeFile too) for anything else."""
    from safetensors import SafetensorError
    from safetensors.torch import load

    try:
        metadata, data = _read(path)
        tensors = load(data)
    except (OSError, SafetensorError, ValueError) as exc:
        raise ValueError(f"{path} cannot be read: {exc}") from None
    if metadata.get("format") != OUTPUTS_FORMAT or set(tensors) != set(OUTPUT_KEYS):
        raise ValueError(f"{path} is not a saved-outputs file")
    return {name: tensors[name] for name in OUTPUT_KEYS}
