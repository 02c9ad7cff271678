"""Record what a repro script does with torch: the calls, their contexts, what it printed and how it ended.

The recorder (``fuzz_core.record.recorder``) runs *inside* the sandbox, in the same process as the script it
records, so everything it writes is as untrusted as the script: the caller reads the JSON back as data,
validates it and never runs anything it names. ``RUNNER`` is the file to hand to the sandboxed interpreter:
``python -I RUNNER SCRIPT OUT.json SOFT_DEADLINE``. It imports only torch and the standard library.
"""

from __future__ import annotations

from pathlib import Path

FORMAT = 1  # the recording's JSON layout; readers refuse other versions
RECORDER_VERSION = "3"  # bump when what is recorded changes: stored recordings are then redone
EMULABLE = ("cuda", "mps")  # devices a recorded run may move to the CPU (Note [CUDA on the CPU], recorder.py)
RUNNER = Path(__file__).resolve().with_name("run_script.py")
PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the fuzz_core folder, mounted read-only in the sandbox

__all__ = ["EMULABLE", "FORMAT", "PACKAGE_DIR", "RECORDER_VERSION", "RUNNER"]
