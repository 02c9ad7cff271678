"""The report's own repro, run in the real bubblewrap sandbox, decides the source re-check; never run unsandboxed."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.harness.stage import generate_harnesses
from agent.transfer.source_recheck import stored_recheck, torch_version
from agent.transfer.source_repro import NO_REPRO, NO_SANDBOX, check_source_repros, compare_printed, report_repro
from agent.transfer.stage import run_transfer
from db import models
from db.queries import transfer as tq
from db.store import Store
from tests.agent.transfer.test_stage import _seed_inventory
from tests.db.fixtures import RELU6_PATTERN

# Reports in our own words. The first was fixed long ago: its check holds on this torch.
FIXED_BODY = """relu6 used to change values that are already inside [0, 6].

```python
import torch
x = torch.tensor([0.5, 3.0, 5.5])
assert torch.equal(torch.nn.functional.relu6(x), x), "relu6 moved an in-range value"
```
"""
# The second asserts what relu6 never does, so its assertion fails here: it "reproduces".
FAILING_BODY = """relu6 should leave 7 alone (it does not).

```python
import torch
out = torch.nn.functional.relu6(torch.tensor([7.0]))
assert out.item() == 7.0, "relu6 clipped 7 to 6"
```
"""
PROSE_BODY = "relu6 is wrong, no code, just `torch.nn.functional.relu6(x)` inline."


def _report(store: Store, number: int, body: str, state: str = "open", raw: dict | None = None) -> int:
    pattern = RELU6_PATTERN
    with store.session() as session:
        issue = models.Issue(repo="pytorch/pytorch", number=number, title="relu6 report", body=body, state=state,
                             raw=raw or {}, content_hash=str(number) * 8)
        session.add(issue)
        session.flush()
        row = models.Pattern(
            issue_id=issue.id, kind=pattern.kind.value, api=pattern.api, reference_mode="eager",
            test_mode="jit.trace", trigger=pattern.trigger.model_dump(), oracle=pattern.oracle.model_dump(mode="json"),
            formal=pattern.to_formal(), extractor="test", extractor_version="1", status="extracted",
        )
        session.add(row)
        session.flush()
        return row.id


def _check(store: Store, pattern_id: int):  # type: ignore[no-untyped-def]
    with store.session() as session:
        pattern = session.get(models.Pattern, pattern_id)
        return stored_recheck(pattern.source_check), pattern.source_outcome, pattern.source_basis


def test_fixed_report_says_fixed_and_still_transfers_failing_one_reproduces(store: Store) -> None:
    fixed = _report(store, 501, FIXED_BODY, state="closed", raw={"state_reason": "completed"})
    failing = _report(store, 502, FAILING_BODY)
    _seed_inventory(store)
    assert run_transfer(store, top_k=3).patterns == 2
    generate_harnesses(store, frozenset({"torch.nn.functional.relu6"}))

    summary = check_source_repros(store, sandbox=True, budget_s=600, workers=2)
    assert (summary.due, summary.ran, summary.reproduces, summary.does_not_reproduce) == (2, 2, 1, 1)

    check, outcome, basis = _check(store, fixed)
    assert (outcome, basis) == ("fixed", "report_repro")
    assert check.summary.startswith(f"fixed in torch {torch_version()} (no longer reproduces: report's repro;")
    assert check.repro.exit_code == 0 and "its own checks hold (assert)" in check.repro.reason

    check, outcome, basis = _check(store, failing)
    assert (outcome, basis) == ("reproduces", "report_repro")
    assert check.summary == f"reproduces on torch {torch_version()} (report's repro)"
    assert "its assertion failed (AssertionError: relu6 clipped 7 to 6)" in check.repro.reason

    with store.session() as session:  # the fixed report's transfer goes ahead: its candidates wait to be fuzzed
        candidates = {c.target_api: c for c in session.query(models.Candidate).filter_by(pattern_id=fixed)}
        assert candidates["torch.nn.functional.hardtanh"].status == "harnessed"
        harnesses = [h for c in candidates.values() for h in c.harnesses]
        assert {h.spec["api"] for h in harnesses} == {"torch.nn.functional.relu6", "torch.nn.functional.hardtanh"}
        assert {h.status for h in harnesses} == {"pending"}
        assert session.get(models.Pattern, fixed).status == "transferred"

    again = check_source_repros(store, sandbox=True, budget_s=600, workers=2)
    assert again.due == 0  # decided on this torch: not run again


def test_without_a_sandbox_the_repro_is_not_run_and_the_reason_is_kept(
    store: Store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    pattern_id = _report(store, 601, FAILING_BODY)
    prose = _report(store, 602, PROSE_BODY)
    _seed_inventory(store)
    run_transfer(store, top_k=1)

    summary = check_source_repros(store, sandbox=False, budget_s=600)  # the command said --no-sandbox
    assert (summary.ran, summary.not_run) == (0, 2)
    check, outcome, basis = _check(store, pattern_id)
    assert (outcome, basis) == ("not_checked", None)
    assert check.repro.reason == NO_SANDBOX and check.repro.exit_code is None and check.repro.retry
    assert NO_SANDBOX in check.summary
    check, _, _ = _check(store, prose)
    assert check.repro.reason == NO_REPRO and not check.repro.retry

    monkeypatch.setenv("TRANSFUZZ_BWRAP", str(tmp_path / "no-bwrap-here"))  # sandboxed, but bwrap is missing
    summary = check_source_repros(store, sandbox=True, budget_s=600)
    assert (summary.due, summary.ran, summary.not_run) == (1, 0, 1)  # the prose report is not due again
    check, outcome, _ = _check(store, pattern_id)
    assert outcome == "not_checked" and check.repro.exit_code is None
    assert check.repro.reason.startswith("no sandbox here: bubblewrap not found at")


def test_the_repro_is_the_first_python_block_that_imports_torch() -> None:
    body = "```text\nimport torch\n```\n```python\nprint(1)\n```\n```python\n>>> import torch\n>>> torch.ones(2)\n```\n"
    assert report_repro(body) == "import torch\ntorch.ones(2)"
    assert report_repro(PROSE_BODY) is None


def test_two_printed_values_are_compared_as_printed() -> None:
    assert compare_printed("eager: tensor([1.0000, 2.5000])\ncompiled: tensor([1.0000, 2.7500])\n") == (
        True, "it printed two values that differ (element 1 of 2: 2.5 vs 2.75)")
    assert compare_printed("tensor([[1., nan],\n        [3., 4.]], dtype=torch.float16)\n"
                           "tensor([[1., nan],\n        [3., 4.]])\n")[0] is False
    assert compare_printed("(2, 3)\n(2, 3)\n") is None  # shapes say nothing about values
    assert compare_printed("True\nFalse\n") is None
    assert compare_printed("1.0\n2.0\n3.0\n") is None  # three values: which two?


HOSTILE_BODY = """relu6 report whose code snoops around.

```python
import json, os, socket
if False:
    import torch  # named, so the block counts as the report's repro; never imported, to keep the test cheap
seen = {"env": dict(os.environ), "home": os.path.expanduser("~")}
try:
    socket.create_connection(("127.0.0.1", 5432), timeout=2)
    seen["net"] = "connected"
except OSError as exc:
    seen["net"] = type(exc).__name__
try:
    open(OUTSIDE, "w").write("pwned")
    seen["write"] = "done"
except OSError as exc:
    seen["write"] = type(exc).__name__
print(json.dumps(seen))
```
"""


def test_a_hostile_report_repro_sees_no_secret_no_network_and_writes_nothing_outside(
    store: Store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    import json

    outside = tmp_path / "outside.txt"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET123")
    pattern_id = _report(store, 701, HOSTILE_BODY.replace("OUTSIDE", repr(str(outside))))
    _seed_inventory(store)
    run_transfer(store, top_k=1)
    assert check_source_repros(store, sandbox=True, budget_s=600).ran == 1
    check, outcome, _ = _check(store, pattern_id)
    seen = json.loads(check.repro.output_tail)
    assert "OPENAI_API_KEY" not in seen["env"] and "SECRET123" not in check.repro.output_tail
    assert seen["net"] != "connected" and not outside.exists()
    assert outcome == "inconclusive"  # it ran clean with no check and no two values: no verdict from the script
    assert check.repro.status == "no_verdict" and "report's repro ran; no verdict from the script" in check.summary


def test_what_a_run_says_is_read_simply() -> None:
    from agent.transfer.source_repro import judge

    script = "/sandbox/report_repro.py"
    code = "import torch\nx = torch.ones(2, dtype=torch.double, requires_grad=True)\n" \
           "torch.autograd.gradcheck(lambda v: v.cuda().sum(), (x,))\n"
    inside_torch = ('Traceback (most recent call last):\n'
                    f'  File "{script}", line 3, in <module>\n    torch.autograd.gradcheck(f, (x,))\n'
                    '  File "/venv/lib/python3.12/site-packages/torch/cuda/__init__.py", line 400, in _lazy_init\n'
                    '    raise AssertionError("Torch not compiled with CUDA enabled")\n'
                    'AssertionError: Torch not compiled with CUDA enabled\n')
    assert judge(code, script, 1, "", inside_torch, timeout_s=60) == (
        "no_verdict", "it raised AssertionError: Torch not compiled with CUDA enabled (inside torch/cuda/__init__.py)")
    failed_check = inside_torch.replace("cuda/__init__.py", "autograd/gradcheck.py").replace(
        "AssertionError: Torch not compiled with CUDA enabled",
        "torch.autograd.gradcheck.GradcheckError: Jacobian mismatch for output 0")
    assert judge(code, script, 1, "", failed_check, timeout_s=60) == (
        "reproduces", "a testing check failed (GradcheckError: Jacobian mismatch for output 0)")
    assert judge(code, script, 0, "", "", timeout_s=60) == (
        "does_not_reproduce", "it ran clean and its own checks hold (gradcheck)")
    assert judge("import torch\n", script, None, "", "", timeout_s=60)[0] == "no_verdict"
    assert judge("import torch\n", script, 128 + 11, "", "", timeout_s=60) == (
        "no_verdict", "it ended with SIGSEGV and no traceback")
