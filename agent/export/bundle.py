"""Make each exported repro self-contained: the script beside the report, its saved inputs copied next to it.

fuzz_core's repro scripts load the failing input (a safetensors file) from ``INPUTS``, which
defaults to the absolute path of the file the worker saved (``Evidence.inputs_path``), and take
another path as ``argv[1]``. An export is read on other machines, so the inputs are copied as
``inputs_<id>.safetensors`` and the script's default is rewritten to that file name, relative to
the directory it is run in. The rewrite happens only when the old path appears exactly once as a
literal; otherwise the script is left as it is and the report says how to pass the inputs.

The inputs file is copied only as a regular file inside the worker's folder that saved it, opened without
following links (fuzz_core/safe_files.py): the folder was writable from inside the sandbox, so a link or a
device planted there is refused with the reason in the report, never followed to a host file.

Only inert repros are exported (Note [Inert repros] in fuzz_core/repro_text.py): a stored script
that unpickles its inputs or runs harness code (written before repros were inert, or for a
local harness with its own code) is left out, and the report says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from agent.text_safety import code_span, markdown_inline
from db.queries.findings import FindingRecord
from fuzz_core.evidence import Evidence
from fuzz_core.safe_files import UnsafeFile, copy_regular

# Signs of a repro that is not inert: it unpickles its inputs, or it carries or loads harness code.
_NOT_INERT = ("weights_only=False", "pickle", "HARNESS_FILE", "# --- harness code")


@dataclass
class BundledRepro:
    finding_id: int
    repro_file: str
    text: str
    inputs_file: str | None = None
    note: str = ""  # what a reader must know to run it, when not simply `python repro_<id>.py`
    short_file: str | None = None  # the minimised plain-torch repro (fuzz_core/short_repro.py), when there is one
    short_text: str = ""


def repro_file_name(finding_id: int) -> str:
    return f"repro_{finding_id}.py"


def inputs_file_name(finding_id: int, suffix: str = ".safetensors") -> str:
    return f"inputs_{finding_id}{suffix}"


def short_repro_file_name(finding_id: int) -> str:
    return f"short_repro_{finding_id}.py"


def short_repro_text(finding: FindingRecord) -> str:
    """The minimised repro the worker wrote and saw exit 1 (Evidence.minimised); "" when there is none."""
    minimised = Evidence.of(finding.evidence).minimised
    if minimised is None or minimised.short_repro_exit != 1:
        return ""
    text = minimised.short_repro
    if text is None or not text.strip() or not is_inert(text):
        return ""
    return text if text.endswith("\n") else text + "\n"


def is_inert(repro: str) -> bool:
    """True for a script fuzz_core renders today: no pickle, no harness code of its own."""
    return not any(sign in repro for sign in _NOT_INERT)


def _copy_inputs(source: str, target: Path) -> tuple[bool, str]:
    """(copied, why refused): a missing file is (False, ""), a link, device or oversize file is refused."""
    if not os.path.lexists(source):
        return False, ""
    try:
        copy_regular(source, target)
    except UnsafeFile as exc:
        return False, str(exc)
    return True, ""


def bundle_repro(out: Path, finding: FindingRecord) -> BundledRepro | None:
    """Write the finding's repro (and its inputs) into ``out``; None when it has no (inert) repro."""
    if not finding.repro.strip() or not is_inert(finding.repro):
        return None
    text = finding.repro if finding.repro.endswith("\n") else finding.repro + "\n"
    bundled = BundledRepro(finding_id=finding.id, repro_file=repro_file_name(finding.id), text=text)
    source = Evidence.of(finding.evidence).inputs_path
    if isinstance(source, str) and source:
        copied, refused = _copy_inputs(source, out / inputs_file_name(finding.id, Path(source).suffix or ".safetensors"))
        if refused:
            bundled.note = f"its saved inputs ({code_span(source)}) were not exported: {markdown_inline(refused)}"
        elif copied:
            bundled.inputs_file = inputs_file_name(finding.id, Path(source).suffix or ".safetensors")
            literal = repr(source)
            if text.count(literal) == 1:
                bundled.text = text.replace(literal, repr(bundled.inputs_file))
                bundled.note = f"run it in the directory that holds {code_span(bundled.inputs_file)}"
            else:
                bundled.note = f"pass the inputs: {code_span(f'python {bundled.repro_file} {bundled.inputs_file}')}"
        else:
            bundled.note = f"its saved inputs ({code_span(source)}) were not found when exporting"
    temporary = out / f".{bundled.repro_file}.tmp"
    temporary.write_text(bundled.text, encoding="utf-8")
    os.replace(temporary, out / bundled.repro_file)
    short = short_repro_text(finding)
    if short:
        bundled.short_file, bundled.short_text = short_repro_file_name(finding.id), short
        temporary = out / f".{bundled.short_file}.tmp"
        temporary.write_text(short, encoding="utf-8")
        os.replace(temporary, out / bundled.short_file)
    return bundled
