"""A tiny issue dump and real-issue labels written in our own words (no tracker text is copied).

Issue numbers are chosen by the fixed split: 3 and 4 are train, 1 and 2 are eval; 12 is a pull request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO_URL = "https://api.github.com/repos/example/tensors"
BF16_REPRO = "```python\nimport torch\nx = torch.ones(4096, dtype=torch.bfloat16)\nprint(torch.cumsum(x, 0)[-1])\n```"


def issue(number: int, title: str, body: str, labels: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"number": number, "title": title, "body": body, "state": "closed", "comments": 0,
            "labels": [{"name": name} for name in labels or []], "repository_url": REPO_URL,
            "html_url": f"https://github.com/example/tensors/issues/{number}",
            "created_at": "2024-01-02T03:04:05Z", "updated_at": "2024-01-03T03:04:05Z", **extra}


ISSUES = [
    issue(3, "cumsum in bfloat16 returns the wrong total",
          "The last element should be 4096 but it stops far below.\n" + BF16_REPRO,
          ["module: correctness (silent)"]),
    issue(4, "torch.log gives nan for negative input",
          "```python\nimport torch\nprint(torch.log(torch.tensor([-1.0])))\n```\nIs this expected?"),
    issue(1, "numbers look off sometimes", "It happened again after the upgrade."),
    issue(2, "a question about sums", "Why does my loop give a different answer?"),
    issue(12, "Fix the cumsum kernel", "Fixes the total.", pull_request={"url": f"{REPO_URL}/pulls/12"}),
]


def label(number: int, verdict: str, kind: str, apis: list[str], modes: list[str], has_repro: bool = True,
          **extra: Any) -> dict[str, Any]:
    return {"number": number, "url": f"https://github.com/example/tensors/issues/{number}", "kind": kind,
            "verdict": verdict, "has_repro": has_repro, "apis": apis, "modes": modes, "dtypes": [],
            "trigger": "", "evidence": "written for the test", **extra}


LABELS = [
    label(3, "bug", "Precision_Mismatch", ["torch.Tensor.cumsum"], ["eager", "bfloat16"]),
    label(4, "not_bug", "NaN_Inf", ["torch.log"], ["eager"]),
    label(1, "bug", "NaN_Inf", ["torch.sum"], ["eager", "cuda"]),
    label(2, "unknown", "Other", ["torch.sum"], ["eager"], has_repro=False),
]


def write_dump(folder: Path, issues: list[dict[str, Any]] | None = None) -> Path:
    path = folder / "issues.json"
    path.write_text(json.dumps(ISSUES if issues is None else issues), encoding="utf-8")
    return path


def write_labels(folder: Path, records: list[dict[str, Any]] | None = None, extra_lines: list[str] = ()) -> Path:
    path = folder / "labels.jsonl"
    lines = [json.dumps(r) for r in (LABELS if records is None else records)] + list(extra_lines)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
