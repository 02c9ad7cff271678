"""`review show --replay`: both modes and float64 at the worst elements, recomputed inside the sandbox.

The finding's harness spec and saved input are handed to fuzz_core/replay_values.py, run by the same
bubblewrap runner as `export --check-repro` (agent/export/verify.py): no network, read-only system,
the package, spec and input read-only, an empty environment. Nothing of the finding runs in this
process; what comes back is one line of JSON, validated here. The saved input is first copied into the
replay's own folder as a regular file from its worker's folder, opened without following links
(fuzz_core/safe_files.py): a link planted there is refused, never bound into the sandbox.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent.cli.json_out import Measure
from fuzz_core.safe_files import UnsafeFile, copy_regular

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
REPLAY_SCRIPT = PACKAGE_ROOT / "fuzz_core" / "replay_values.py"


class WorstElement(BaseModel):
    index: list[int]
    reference: Measure
    test: Measure
    float64: Measure = None


class Replay(BaseModel):
    output: str | None = None
    reference_mode: str | None = None
    test_mode: str | None = None
    output_dtype: str | None = None
    shape: list[int] | None = None
    worst: list[WorstElement] = []
    error: str | None = None


def replay_finding(spec: dict[str, Any], inputs_path: str, failure_key: str, *, sandbox: bool = True,
                   timeout_s: float = 300.0) -> Replay:
    """Run the replay in a sandboxed fresh interpreter; an error of any kind comes back as Replay.error."""
    from agent.export.verify import run_repro

    output = failure_key.partition(":")[2] or None
    with tempfile.TemporaryDirectory(prefix="transfuzz-replay-") as folder:
        spec_path = Path(folder) / "spec.json"
        spec_path.write_text(json.dumps(spec))
        inputs_copy = Path(folder) / "inputs.safetensors"
        try:
            copy_regular(inputs_path, inputs_copy)
        except UnsafeFile as exc:
            return Replay(error=f"the saved input was refused: {exc}")
        args = [str(PACKAGE_ROOT), str(spec_path), str(inputs_copy)] + ([output] if output else [])
        check = run_repro(REPLAY_SCRIPT, finding_id=0, verdict="replay", args=args, timeout_s=timeout_s,
                          sandbox=sandbox)
    line = next((text for text in reversed(check.output_tail.splitlines()) if text.startswith("REPLAY ")), None)
    if line is None:
        tail = " ".join(check.output_tail.split())[-300:]
        return Replay(error=f"the replay ended without a result (exit {check.exit_code}): {tail}")
    try:
        return Replay.model_validate_json(line.removeprefix("REPLAY "))
    except ValueError as exc:
        return Replay(error=f"the replay printed an unreadable result: {exc}")


def replay_lines(replay: Replay) -> list[str]:
    if replay.error:
        return [f"  replay: {replay.error}"]
    label = max(len(replay.reference_mode or ""), len(replay.test_mode or ""), len("float64"))
    lines = [f"  replayed in the sandbox: output {replay.output} ({replay.output_dtype}{replay.shape}), "
             f"the {len(replay.worst)} element(s) where the modes differ most:"]
    for element in replay.worst:
        lines.append(f"    at {element.index}:")
        for mode, value in ((replay.reference_mode or "reference", element.reference),
                            (replay.test_mode or "test", element.test), ("float64", element.float64)):
            shown = f"{value:.6g}" if isinstance(value, float) else ("-" if value is None else str(value))
            lines.append(f"      {mode.ljust(label)}  {shown}")
    return lines
