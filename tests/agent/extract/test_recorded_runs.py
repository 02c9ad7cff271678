"""A report's repro, run in the real bubblewrap sandbox under the recorder, and the pattern read from what it ran.

One script per kind (compile, jit, precision, layout, gradient, NaN/Inf) in our own words, plus scripts that
raise (a removed API, CUDA on a CPU-only torch), hang (soft limit, and a script that blocks the soft limit) and
try the network. They run once per module, two at a time (each costs a few seconds of sandbox start-up).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agent.extract.record_run import NO_SANDBOX, RecordRun, record_repro
from agent.extract.recorded import RecordedFacts, derive
from agent.extract.recording import Recording
from agent.patterns import OracleKind, PatternKind

COMPILE = """
import torch
import torch.nn.functional as F

def smooth(t):
    return F.softplus(t, beta=2.0, threshold=5.0) - 0.5

inp = torch.linspace(-3.0, 3.0, 12)
want = smooth(inp)
got = torch.compile(smooth, backend="aot_eager")(inp)
torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)
print("same within tolerance")
"""

JIT = """
import torch
import torch.nn as nn

class Gate(nn.Module):
    def forward(self, a):
        return torch.nn.functional.hardswish(a) * 0.5 + 1.0

block = Gate().eval()
sample = torch.randn(3, 5)
frozen = torch.jit.trace(block, sample)
print("eager :", block(sample)[0, :3])
print("traced:", frozen(sample)[0, :3])
print("equal:", torch.equal(block(sample), frozen(sample)))
"""

PRECISION = """
import torch

vals = torch.tensor([10.5, 11.0, 11.5, 12.0])
full = torch.exp(vals)
half = torch.exp(vals.half()).float()
print("float32:", full)
print("float16:", half)
print("largest gap:", (full - half).abs().max().item())
"""

LAYOUT = """
import torch

torch.manual_seed(3)
grid = torch.rand(6, 4)
view = grid.t()  # a transposed view: strides (1, 4)
packed = view.contiguous()
a = torch.cumprod(view, dim=1)
b = torch.cumprod(packed, dim=1)
print("max gap:", (a - b).abs().max().item())
assert torch.allclose(a, b)
"""

GRADIENT = """
import torch

pt = torch.tensor([0.3, -1.2, 2.5], dtype=torch.float64, requires_grad=True)
out = torch.special.erfcx(pt).sum()
out.backward()
analytic = pt.grad.clone()
step = 1e-6
numeric = torch.zeros_like(pt)
with torch.no_grad():
    for k in range(pt.numel()):
        hi = pt.clone()
        hi[k] += step
        lo = pt.clone()
        lo[k] -= step
        numeric[k] = (torch.special.erfcx(hi).sum() - torch.special.erfcx(lo).sum()) / (2 * step)
print("autograd:", analytic)
print("numeric :", numeric)
"""

NAN_INF = """
import torch

scores = torch.tensor([float("inf"), 2.0, -1.0])
probs = torch.softmax(scores, dim=0)
print("probabilities:", probs)
print("sum:", probs.sum().item())
"""

REMOVED_API = """
import torch

m = torch.randn(3, 8)
sym = m @ m.T
spectrum = torch.rfft(sym, 1)  # gone since torch.fft became a module
print(spectrum)
"""

CUDA_ONLY = """
import torch

data = torch.rand(200) * 4
on_cpu = torch.histc(data, bins=8, min=0, max=4)
on_gpu = torch.histc(data.cuda(), bins=8, min=0, max=4).cpu()
print(on_cpu)
print(on_gpu)
print(torch.equal(on_cpu, on_gpu))
"""

MPS_ONLY = """
import torch

layer = torch.nn.Linear(6, 3)
x = torch.randn(5, 6)
expected = torch.nn.functional.softplus(layer(x), beta=2.0)
layer = layer.to("mps")
got = torch.nn.functional.softplus(layer(x.to(torch.device("mps"))), beta=2.0)
torch.mps.synchronize()
print((expected - got.cpu()).abs().max())
"""

# the loops sleep rather than spin (the suite shares two cores); the limits leave room for a slow torch import on a
# busy machine, so the soft limit falls inside the loop (line 7), and after HANGS_HARD has blocked it
HANGS = """
import time, torch

x = torch.ones(4)
y = torch.tanh(x)
print("before the loop", y.sum().item())
while True: time.sleep(0.01)
"""

# blocks the recorder's soft limit, so only the sandbox's kill ends it; the calls a second old were flushed
HANGS_HARD = """
import signal
import time
import torch

x = torch.ones(4)
y = torch.atan(x)
time.sleep(1.2)
z = torch.asinh(y)  # a call after a second: the recorder writes its file
signal.signal(signal.SIGALRM, signal.SIG_IGN)  # (a mask would bind this thread only; torch has others)
while True:
    time.sleep(0.01)
"""

NETWORK = """
import socket
import torch

w = torch.arange(6.0)
c = torch.cumsum(w, dim=0)
print("cumsum:", c.tolist())
conn = socket.create_connection(("192.0.2.10", 80), timeout=3)
conn.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")
"""

SCRIPTS = {"compile": (COMPILE, 90.0), "jit": (JIT, 60.0), "precision": (PRECISION, 60.0),
           "layout": (LAYOUT, 60.0), "gradient": (GRADIENT, 60.0), "nan_inf": (NAN_INF, 60.0),
           "removed_api": (REMOVED_API, 60.0), "cuda_only": (CUDA_ONLY, 60.0), "mps_only": (MPS_ONLY, 60.0),
           "hangs": (HANGS, 30.0),
           "hangs_hard": (HANGS_HARD, 30.0), "network": (NETWORK, 60.0)}


@pytest.fixture(scope="module")
def runs() -> dict[str, RecordRun]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(record_repro, code, sandbox=True, timeout_s=limit)
                   for name, (code, limit) in SCRIPTS.items()}
        return {name: future.result() for name, future in futures.items()}


def _facts(run: RecordRun) -> RecordedFacts:
    assert run.recording is not None, (run.status, run.reason, run.stderr_tail)
    return derive(run.recording, run.status)


def _names(run: RecordRun) -> list[str]:
    assert run.recording is not None
    return [c.name for c in run.recording.calls]


# --- one recorded repro per kind ---------------------------------------------------------------------------------


def test_compile_repro_gives_a_compile_pattern(runs: dict[str, RecordRun]) -> None:
    run = runs["compile"]
    assert run.status == "ok", run.reason
    facts = _facts(run)
    assert facts.kind == PatternKind.Compile_Eager_Mismatch
    assert (facts.api, facts.reference_mode, facts.test_mode) == ("torch.nn.functional.softplus", "eager",
                                                                   "compile:aot_eager")
    assert facts.trigger is not None and facts.trigger.params == {"beta": "2.0", "threshold": "5.0"}
    assert facts.oracle is not None and (facts.oracle.rtol, facts.oracle.atol) == (1e-4, 1e-6)
    assert facts.compared == "assert_close" and facts.diverged is False
    compiled = next(c for c in run.recording.calls if c.name == "torch.compile")  # type: ignore[union-attr]
    assert "torch._C._nn.softplus" in (compiled.inner or [])  # the graph's ops, from the backend around the real one


def test_jit_repro_gives_a_jit_pattern(runs: dict[str, RecordRun]) -> None:
    run = runs["jit"]
    assert run.status == "ok", run.reason
    facts = _facts(run)
    assert (facts.kind, facts.api, facts.test_mode) == (PatternKind.JIT_Eager_Mismatch,
                                                        "torch.nn.functional.hardswish", "jit.trace")
    traced = [c for c in run.recording.calls if c.name == "torch.jit.trace"]  # type: ignore[union-attr]
    assert traced and "torch.ops.aten.hardswish.default" in (traced[-1].inner or [])  # ATen ops the graph ran


def test_precision_repro_finds_the_first_diverging_op(runs: dict[str, RecordRun]) -> None:
    run = runs["precision"]
    assert run.status == "ok", run.reason
    facts = _facts(run)
    assert (facts.kind, facts.api, facts.test_mode) == (PatternKind.Precision_Mismatch, "torch.exp", "dtype:float16")
    assert facts.first_divergence == "torch.exp" and facts.diverged is True  # exp(11.5) is inf in float16
    assert facts.compared == "sub"
    assert facts.trigger is not None and facts.trigger.dtypes == []  # float16 is the mode, not a trigger


def test_layout_repro_gives_a_layout_pattern(runs: dict[str, RecordRun]) -> None:
    facts = _facts(runs["layout"])
    assert (facts.kind, facts.api, facts.test_mode) == (PatternKind.Layout_Mismatch, "torch.cumprod",
                                                        "layout:noncontiguous")
    assert facts.trigger is not None and facts.trigger.params == {"dim": "1"}
    assert "the sides differ by layout:noncontiguous" in facts.evidence


def test_gradient_repro_gives_a_gradient_pattern(runs: dict[str, RecordRun]) -> None:
    facts = _facts(runs["gradient"])
    assert (facts.kind, facts.api, facts.test_mode) == (PatternKind.Gradient_Mismatch, "torch.special.erfcx", "grad")
    assert facts.trigger is not None and facts.trigger.dtypes == ["float64"]
    assert facts.compared == "printed two values"


def test_nan_inf_repro_gives_a_nan_pattern(runs: dict[str, RecordRun]) -> None:
    facts = _facts(runs["nan_inf"])
    assert (facts.kind, facts.api, facts.test_mode) == (PatternKind.NaN_Inf, "torch.softmax", "eager")
    assert facts.trigger is not None and facts.trigger.special_values == ["inf"]
    assert facts.oracle is not None and facts.oracle.kind == OracleKind.NaNConsistency
    assert facts.trigger.params == {"dim": "0"}


def test_calls_carry_shapes_dtypes_contexts_and_printed_lines(runs: dict[str, RecordRun]) -> None:
    recording = runs["precision"].recording
    assert recording is not None
    exp_half = [c for c in recording.calls if c.name == "torch.exp"][1]
    (tensor,) = exp_half.inputs()
    assert (tensor.shape, tensor.dtype, tensor.device, exp_half.caller) == ([4], "float16", "cpu", "<script>")
    assert exp_half.outputs()[0].stats is not None and exp_half.outputs()[0].stats.posinf == 2
    assert [p.text for p in recording.output][:1] == ["float32: tensor([ 36315.5039,  59874.1406,  98715.7734, "
                                                      "162754.7969])"]
    layout = runs["layout"].recording
    assert layout is not None
    cumprod = [c for c in layout.calls if c.name == "torch.cumprod"][0]
    assert cumprod.inputs()[0].contiguous is False and cumprod.inputs()[0].stride == [1, 4]


# --- repros that raise, hang or reach for the network ------------------------------------------------------------


def test_a_removed_api_raises_and_keeps_the_calls_before(runs: dict[str, RecordRun]) -> None:
    run = runs["removed_api"]
    assert run.status == "raised"
    assert run.reason == "it raised AttributeError at line 6: module 'torch' has no attribute 'rfft'"
    assert _names(run) == ["torch.randn", "torch.Tensor.T", "torch.Tensor.matmul"]
    facts = _facts(run)
    assert facts.api == "torch.matmul" and facts.kind is None  # what ran, with no mode pair to read


def test_cuda_on_a_cpu_only_torch_fails_cleanly_then_runs_on_the_cpu(runs: dict[str, RecordRun]) -> None:
    run = runs["cuda_only"]
    assert run.reason.startswith("CUDA is missing here (it raised AssertionError at line 6: Torch not compiled "
                                 "with CUDA enabled); run again with CUDA on the CPU: it ran to its end")
    assert run.status == "ok" and run.recording is not None and run.recording.emulated == ["cuda"]
    moved = [c for c in run.recording.calls if c.emulated == "cuda"]
    assert [c.name for c in moved] == ["torch.Tensor.cuda"]
    facts = _facts(run)
    assert (facts.kind, facts.api, facts.test_mode) == (PatternKind.Device_Mismatch, "torch.histc", "device:cuda")
    assert facts.device_only == ["cuda"]
    assert facts.trigger is not None and facts.trigger.params == {"bins": "8", "min": "0", "max": "4"}


def test_mps_on_a_torch_without_it_runs_again_on_the_cpu_and_reads_as_an_mps_device_report(
        runs: dict[str, RecordRun]) -> None:
    run = runs["mps_only"]
    assert run.reason.startswith("MPS is missing here (it raised RuntimeError at line 7: PyTorch is not linked with "
                                 "support for mps devices); run again with MPS on the CPU: it ran to its end")
    assert run.status == "ok" and run.recording is not None and run.recording.emulated == ["mps"]
    assert {c.emulated for c in run.recording.calls} == {None, "mps"}
    facts = _facts(run)
    assert (facts.kind, facts.api, facts.test_mode) == (PatternKind.Device_Mismatch,
                                                        "torch.nn.functional.softplus", "device:cuda")
    assert facts.test_options == {"device": "mps"} and facts.device_only == ["mps"]


def test_cuda_failure_alone_keeps_the_calls_before_it() -> None:
    run = record_repro(CUDA_ONLY, sandbox=True, timeout_s=60, devices_on_cpu=False)
    assert run.status == "raised" and "CUDA" in run.reason
    assert _names(run)[-1] == "torch.Tensor.cuda"
    assert run.recording is not None and run.recording.calls[-1].error is not None
    assert "torch.histc" in _names(run)


def test_a_hang_is_stopped_at_the_soft_limit_with_its_calls(runs: dict[str, RecordRun]) -> None:
    run = runs["hangs"]
    assert run.status == "timeout", run.reason
    assert run.reason == "the recorder stopped it at its time limit at line 7"
    assert "torch.tanh" in _names(run)  # the soft limit stopped it (status and reason), not the hard kill
    assert run.recording is not None and run.recording.output[0].text.startswith("before the loop 3.046")


def test_a_hang_that_blocks_the_soft_limit_is_killed_and_keeps_the_last_flush(runs: dict[str, RecordRun]) -> None:
    run = runs["hangs_hard"]
    assert run.status == "killed" and run.exit_code is None
    assert run.reason == "it ran past the time limit and the sandbox was killed"
    assert _names(run)[:3] == ["torch.ones", "torch.atan", "torch.asinh"]


def test_a_network_attempt_fails_inside_and_is_recorded(runs: dict[str, RecordRun]) -> None:
    run = runs["network"]
    assert run.status == "raised"
    raised = run.recording.exception  # type: ignore[union-attr]
    assert raised is not None and raised.type == "OSError" and raised.line == 8
    assert "unreachable" in raised.message.lower()
    assert _names(run) == ["torch.arange", "torch.cumsum", "torch.Tensor.tolist"]
    assert run.recording.output[0].text == "cumsum: [0.0, 1.0, 3.0, 6.0, 10.0, 15.0]"  # type: ignore[union-attr]


def test_never_run_without_the_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('x')\nimport torch\n"
    run = record_repro(code, sandbox=False)
    assert (run.status, run.reason, run.recording) == ("not_run", NO_SANDBOX, None)
    monkeypatch.setenv("TRANSFUZZ_BWRAP", str(tmp_path / "no-bwrap"))
    run = record_repro(code, sandbox=True)
    assert run.status == "not_run" and run.reason.startswith("no sandbox here: bubblewrap not found at")
    assert not marker.exists()


def test_the_recording_is_plain_json_data(runs: dict[str, RecordRun]) -> None:
    recording = runs["nan_inf"].recording
    assert recording is not None
    text = recording.model_dump_json()
    assert "NaN" not in text and "Infinity" not in text  # non-finite values travel as strings
    assert Recording.model_validate(json.loads(text)) == recording


# --- stored with the issue ------------------------------------------------------------------------------------------


def test_the_stored_recording_round_trips(runs: dict[str, RecordRun], store) -> None:  # type: ignore[no-untyped-def]
    from agent.extract.record_stage import _save, stored_form
    from db import models
    from db.queries.recordings import get_recording, is_current

    with store.session() as session:
        issue = models.Issue(repo="pytorch/pytorch", number=7, title="t", body="b", content_hash="h")
        session.add(issue)
        session.flush()
        issue_id = issue.id
    for name in ("nan_inf", "cuda_only", "network"):  # NaN/Inf as strings, an emulated run, an exception
        run = runs[name]
        facts = _save(store, issue_id, run, "2.13.0+cpu")
        with store.session() as session:
            stored = get_recording(session, issue_id)
        assert stored is not None and stored.values.status == run.status and stored.values.reason == run.reason
        assert run.recording is not None
        assert Recording.model_validate(stored.values.recording) == Recording.model_validate(stored_form(run.recording))
        assert Recording.model_validate(stored.values.recording).calls == run.recording.calls
        assert RecordedFacts.model_validate(stored.values.facts) == facts
        assert is_current(stored, code_sha256=run.code_sha256, recorder_version=run.recorder, torch_version="2.13.0+cpu")
        assert not is_current(stored, code_sha256=run.code_sha256, recorder_version=run.recorder, torch_version="2.14")
    with store.session() as session:
        assert session.query(models.ReproRecording).count() == 1  # replaced, one per issue


# --- the extract stage --------------------------------------------------------------------------------------------

# The text says little that the offline analyzer can use; the recording says which op and which dtype.
VAGUE_TITLE = "exp disagrees with itself"
VAGUE_BODY = "Running this gives two different answers and I do not know which one is right.\n\n```python\n" \
             + PRECISION.strip() + "\n```\n"
HANG_BODY = "The snippet below never finishes for me.\n\n```python\n" + HANGS.strip() + "\n```\n"


def test_the_extract_stage_records_stores_and_goes_on(store) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import select

    from agent.config import Settings
    from agent.extract.record_stage import RecordingOptions, record_issues
    from agent.extract.stage import run_extraction
    from agent.llm.offline import OfflineBackend
    from db.models import Issue, Pattern, ReproRecording, Triage
    from db.queries.issues import IssueRow, upsert_issues

    rows = [IssueRow(repo="acme/torchish", number=n, title=t, body=b, labels=["module: correctness (silent)"],
                     state="open", created_at=None, updated_at=None, closed_at=None, url="", comments=[])
            for n, t, b in ((1, VAGUE_TITLE, VAGUE_BODY), (2, "softmax hangs", HANG_BODY),
                            (3, "tanh is slow", "No code, only words about torch.tanh."))]
    with store.session() as session:
        upsert_issues(session, rows)
    options = RecordingOptions(sandbox=True, budget_s=120, timeout_s=10)
    summary = run_extraction(store, Settings(db_url="sqlite://", llm="offline"),
                             backend=OfflineBackend(use_opinfo=False), recording=options)
    assert summary.processed == 3 and summary.errors == 0  # a hanging repro stops nothing
    assert summary.recordings is not None
    assert {k: summary.recordings[k] for k in ("with_repro", "ran", "reused", "not_run", "left")} == {
        "with_repro": 2, "ran": 2, "reused": 0, "not_run": 0, "left": 0}
    assert summary.recordings["statuses"] == {"ok": 1, "timeout": 1}
    with store.session() as session:
        by_number = {i.number: i.id for i in session.scalars(select(Issue))}
        stored = {r.issue_id: r for r in session.scalars(select(ReproRecording))}
        assert set(stored) == {by_number[1], by_number[2]}
        assert stored[by_number[2]].status == "timeout" and stored[by_number[2]].recording["calls"]
        assert stored[by_number[1]].facts["api"] == "torch.exp"
        pattern = session.scalars(select(Pattern).where(Pattern.issue_id == by_number[1])).one()
        assert (pattern.status, pattern.kind, pattern.api, pattern.test_mode) == (
            "extracted", "Precision_Mismatch", "torch.exp", "dtype:float16")
        assert session.scalar(select(Triage).where(Triage.issue_id == by_number[2])) is not None
    # a stored recording answers for the same code, recorder and torch: nothing runs again
    facts, again = record_issues(store, [by_number[1], by_number[2], by_number[3]], options)
    assert (again.reused, again.ran) == (2, 0) and facts[by_number[1]].api == "torch.exp"



def test_repros_recorded_two_at_once_each_get_their_own_recording(store) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import select

    from agent.extract.record_stage import RecordingOptions, record_issues
    from db.models import Issue
    from db.queries.issues import IssueRow, upsert_issues

    bodies = {4: ("exp disagrees", VAGUE_BODY), 5: ("strided copy differs", "```python\n" + LAYOUT.strip() + "\n```\n"),
              6: ("softmax hangs", HANG_BODY)}
    with store.session() as session:
        upsert_issues(session, [IssueRow(repo="acme/torchish", number=n, title=t, body=b, labels=[], state="open",
                                         created_at=None, updated_at=None, closed_at=None, url="", comments=[])
                                for n, (t, b) in bodies.items()])
    with store.session() as session:
        by_number = {i.number: i.id for i in session.scalars(select(Issue))}
    facts, summary = record_issues(store, list(by_number.values()),
                                   RecordingOptions(sandbox=True, budget_s=120, timeout_s=10, workers=2))
    assert (summary.ran, summary.left, summary.statuses) == (3, 0, {"ok": 2, "timeout": 1})
    assert facts[by_number[4]].api == "torch.exp"  # each issue's facts are its own repro's, not its neighbour's
    assert facts[by_number[5]].api == "torch.cumprod"

def test_without_the_sandbox_the_stage_records_why_and_runs_nothing(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import select

    from agent.extract.record_stage import RecordingOptions, record_issues
    from db.models import Issue, ReproRecording
    from db.queries.issues import IssueRow, upsert_issues

    marker = tmp_path / "ran"
    body = f"```python\nimport torch\nopen({str(marker)!r}, 'w').write('x')\n```"
    with store.session() as session:
        upsert_issues(session, [IssueRow(repo="acme/torchish", number=9, title="t", body=body, labels=[],
                                         state="open", created_at=None, updated_at=None, closed_at=None, url="",
                                         comments=[])])
        issue_id = session.scalar(select(Issue.id))
    facts, summary = record_issues(store, [issue_id], RecordingOptions(sandbox=False))
    assert (facts, summary.not_run, summary.ran, summary.reason) == ({}, 1, 0, NO_SANDBOX)
    with store.session() as session:
        row = session.scalars(select(ReproRecording)).one()
        assert (row.status, row.reason, row.recording) == ("not_run", NO_SANDBOX, {})
    _, again = record_issues(store, [issue_id], RecordingOptions(sandbox=False))
    assert again.not_run == 1 and again.reused == 0  # tried again next time
    assert not marker.exists()
