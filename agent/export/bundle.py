"""Make each exported repro self-contained: the script beside the report, its saved inputs copied next to it.

fuzz_core's repro scripts ``torch.load`` the failing input from ``INPUTS``, which defaults to the
absolute path of the file the worker saved (``evidence["inputs_path"]``), and take another path as
``argv[1]``. An export is read on other machines, so the inputs are copied as ``inputs_<id>.pt``
and the script's default is rewritten to that file name, relative to the directory it is run in.
The rewrite happens only when the old path appears exactly once as a literal; otherwise the
script is left as it is and the report says how to pass the inputs.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from db.queries.findings import FindingRecord


@dataclass
class BundledRepro:
    finding_id: int
    repro_file: str
    text: str
    inputs_file: str | None = None
    note: str = ""  # what a reader must know to run it, when not simply `python repro_<id>.py`


def repro_file_name(finding_id: int) -> str:
    return f"repro_{finding_id}.py"


def inputs_file_name(finding_id: int) -> str:
    return f"inputs_{finding_id}.pt"


def _copy(source: Path, target: Path) -> None:
    temporary = target.with_name(f".{target.name}.tmp")
    shutil.copyfile(source, temporary)
    os.replace(temporary, target)


def bundle_repro(out: Path, finding: FindingRecord) -> BundledRepro | None:
    """Write the finding's repro (and its inputs) into ``out``; None when it has no repro."""
    if not finding.repro.strip():
        return None
    text = finding.repro if finding.repro.endswith("\n") else finding.repro + "\n"
    bundled = BundledRepro(finding_id=finding.id, repro_file=repro_file_name(finding.id), text=text)
    source = finding.evidence.get("inputs_path")
    if isinstance(source, str) and source:
        if Path(source).is_file():
            bundled.inputs_file = inputs_file_name(finding.id)
            _copy(Path(source), out / bundled.inputs_file)
            literal = repr(source)
            if text.count(literal) == 1:
                bundled.text = text.replace(literal, repr(bundled.inputs_file))
                bundled.note = f"run it in the directory that holds `{bundled.inputs_file}`"
            else:
                bundled.note = f"pass the inputs: `python {bundled.repro_file} {bundled.inputs_file}`"
        else:
            bundled.note = f"its saved inputs ({source}) were not found when exporting"
    temporary = out / f".{bundled.repro_file}.tmp"
    temporary.write_text(bundled.text, encoding="utf-8")
    os.replace(temporary, out / bundled.repro_file)
    return bundled
