"""The recording as untrusted data: parsed with limits, rejected with a clear reason, read without running anything."""

from __future__ import annotations

import json

import pytest

from agent.extract.recorded import derive, enrich, public_name
from agent.extract.recording import MAX_RECORDING_BYTES, Recording, RecordingRejected, parse_recording
from agent.patterns import BugPattern, Mode, PatternKind


def _tensor(tid: int, dtype: str = "float32", shape: list[int] | None = None, **extra: object) -> dict:
    return {"type": "tensor", "tensor": {"id": tid, "shape": shape or [4], "dtype": dtype, "device": "cpu",
                                         "stride": [1], "contiguous": True, **extra}}


def _call(i: int, name: str, args: list, out: dict | None = None, **extra: object) -> dict:
    return {"i": i, "name": name, "kind": "function", "ctx": [], "line": i + 1, "caller": "<script>", "args": args,
            **({"out": out} if out else {}), **extra}


def _recording(calls: list[dict], **extra: object) -> dict:
    return {"format": 1, "recorder": "1", "torch": "2.13.0", "status": "ok", "calls": calls,
            "calls_total": len(calls), **extra}


GOOD = _recording([
    _call(0, "torch.randn", [{"type": "int", "value": 4}], _tensor(0)),
    _call(1, "torch.sigmoid", [_tensor(0)], _tensor(1)),
    _call(2, "torch.Tensor.half", [_tensor(0)], _tensor(2, "float16")),
    _call(3, "torch.sigmoid", [_tensor(2, "float16")], _tensor(3, "float16")),
    _call(4, "torch.allclose", [_tensor(1), _tensor(3, "float16")], {"type": "bool", "value": False},
          kwargs={"atol": {"type": "float", "value": 0.001}}),
])


def test_a_good_recording_parses_and_derives_a_pattern() -> None:
    recording = parse_recording(json.dumps(GOOD))
    facts = derive(recording)
    assert (facts.kind, facts.api, facts.test_mode) == (PatternKind.Precision_Mismatch, "torch.sigmoid",
                                                        "dtype:float16")
    assert facts.diverged is True and facts.compared == "allclose"
    assert facts.oracle is not None and facts.oracle.atol == 0.001


@pytest.mark.parametrize(("data", "reason"), [
    (b"{not json", "the recording is not JSON"),
    (b"[1, 2]", "the recording is not a JSON object"),
    (json.dumps({**GOOD, "format": 9}).encode(), "the recording has format 9, not 1"),
    (json.dumps({**GOOD, "run_this": "import os"}).encode(), "the recording is malformed at run_this: Extra inputs"),
    (json.dumps({**GOOD, "status": "pwned"}).encode(), "the recording is malformed at status"),
    (json.dumps(_recording([{**_call(0, "torch.sin", []), "args": [{"type": "code", "value": "x"}]}])).encode(),
     "the recording is malformed at calls.0.args.0.type"),
    (json.dumps(_recording([_call(0, "torch.sin", [{"type": "tensor", "tensor": {"id": -1}}])])).encode(),
     "the recording is malformed at calls.0.args.0.tensor.id"),
    (b" " * (MAX_RECORDING_BYTES + 1), "the recording is larger than 8 MiB"),
])
def test_malformed_recordings_are_rejected_with_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(RecordingRejected) as caught:
        parse_recording(data)
    assert str(caught.value).startswith(reason)


def test_strings_are_cleaned_and_cut_and_lists_capped() -> None:
    noisy = _recording([_call(0, "torch.sin\x00\x1b[31m", [])], output=[{"at": 0, "text": "x" * 5000 + "\ud800"}],
                       events=[{"at": 0, "type": "graph", "detail": {"ops": ["torch.sin"] * 1000}}])
    recording = parse_recording(json.dumps(noisy))
    assert recording.calls[0].name == "torch.sin[31m"
    assert len(recording.output[0].text) == 600 and "\ud800" not in recording.output[0].text
    assert len(recording.events[0].detail["ops"]) == 200  # type: ignore[arg-type]
    many = _recording([_call(i, "torch.sin", []) for i in range(5000)])
    assert len(parse_recording(json.dumps(many)).calls) == 4000


def test_non_finite_json_constants_become_strings() -> None:
    text = json.dumps(_recording([_call(0, "torch.tensor", [], {"type": "tensor", "tensor": {
        "id": 0, "shape": [2], "dtype": "float32", "device": "cpu", "stats": {"sample": [float("nan"), float("inf")]}}})]))
    assert "NaN" in text
    recording = parse_recording(text)
    assert recording.calls[0].outputs()[0].stats.sample == ["nan", "inf"]  # type: ignore[union-attr]


@pytest.mark.parametrize(("raw", "public"), [
    ("torch._C._nn.gelu", "torch.nn.functional.gelu"),
    ("torch._C._linalg.linalg_inv", "torch.linalg.inv"),
    ("torch._C._special.special_erfcx", "torch.special.erfcx"),
    ("torch.ops.aten.tanh.default", "torch.tanh"),
    ("torch.ops.aten.max_pool2d_with_indices.default", "torch.max_pool2d"),
    ("torch.Tensor.add_", "torch.add"),
    ("torch.Tensor.__matmul__", "torch.matmul"),
    ("_operator.mul", "torch.mul"),
    ("torch._VariableFunctionsClass.remainder", "torch.remainder"),
    ("torch.nn.modules.conv.Conv2d", "torch.nn.Conv2d"),
    ("torch.load", None),  # a name that exists but may not be fuzzed stays out
    ("torch.ops.mylib.evil.default", None),
    ("os.system", None),
    ("torch.Tensor.__reduce_ex__", None),
])
def test_recorded_names_map_to_public_ops_through_the_allow_list(raw: str, public: str | None) -> None:
    assert public_name(raw) == public


def test_recorded_facts_enrich_a_text_pattern_where_the_sides_say_so() -> None:
    facts = derive(Recording.model_validate(GOOD))
    text = BugPattern(kind=PatternKind.NaN_Inf, api="torch.sigmoid", reference_mode=Mode(name="eager"),
                      test_mode=Mode(name="eager"), confidence=0.7)
    pattern, error = enrich(text, None, facts)
    assert error is None and pattern is not None
    assert (pattern.kind, pattern.test_mode.name, pattern.confidence) == (PatternKind.Precision_Mismatch,
                                                                          "dtype:float16", 0.7)
    # the text's API stays when it ran; an API that did not run is replaced by the recorded one
    other = text.model_copy(update={"api": "torch.tanh"})
    assert enrich(other, None, facts)[0].api == "torch.sigmoid"  # type: ignore[union-attr]
    # no text pattern: the recorded one
    alone, error = enrich(None, "no differential mode pair found", facts, repro="x = 1")
    assert alone is not None and alone.repro == "x = 1" and alone.kind == PatternKind.Precision_Mismatch


def test_a_nan_the_text_read_off_a_low_precision_pair_keeps_its_kind_on_the_recorded_pair() -> None:
    facts = derive(Recording.model_validate(GOOD))  # float32 vs float16 sides, no NaN recorded
    text = BugPattern(kind=PatternKind.NaN_Inf, api="torch.sigmoid", reference_mode=Mode(name="eager"),
                      test_mode=Mode(name="dtype:float16"), confidence=0.7)
    pattern, error = enrich(text, None, facts)
    assert error is None and pattern is not None
    assert (pattern.kind, pattern.test_mode.name) == (PatternKind.NaN_Inf, "dtype:float16")


def test_extract_cli_records_nothing_without_the_sandbox_and_says_why(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from agent.cli.app import app
    from agent.extract.record_run import NO_SANDBOX

    dump = tmp_path / "issues.json"
    body = "Values differ.\n\n```python\nimport torch\nprint(torch.exp(torch.tensor([11.5]).half()))\n```\n"
    dump.write_text(json.dumps([{"number": 5, "title": "exp in half", "body": body, "state": "open", "labels": [],
                                 "html_url": "https://github.com/acme/torchish/issues/5"}]))
    db = f"sqlite:///{tmp_path / 'r.db'}"
    runner = CliRunner()
    assert runner.invoke(app, ["--db", db, "ingest", "file", str(dump)]).exit_code == 0
    result = runner.invoke(app, ["--db", db, "--json", "extract", "--llm", "offline", "--no-sandbox",
                                 "--record-budget", "1m"])
    assert result.exit_code == 0, result.stdout + result.stderr
    recordings = json.loads(result.stdout)["recordings"]
    assert (recordings["with_repro"], recordings["not_run"], recordings["reason"]) == (1, 1, NO_SANDBOX)
    off = runner.invoke(app, ["--db", f"sqlite:///{tmp_path / 'o.db'}", "--json", "extract", "--llm", "offline",
                              "--record-budget", "0"])
    assert off.exit_code == 0 and json.loads(off.stdout)["recordings"] is None
    bad = runner.invoke(app, ["--db", db, "extract", "--record-budget", "soon"])
    assert bad.exit_code == 2 and "--record-budget" in bad.stderr


def test_trigger_leaves_out_defaults_incidental_values_and_index_dtypes() -> None:
    big = {"max_abs": 4.1, "min_abs": 1e-31, "denormal": True}  # a large random tensor: tiny values by chance
    small = {"nan": 1, "negzero": True}
    calls = [
        _call(0, "torch.randn", [], _tensor(0, "float64", [1000], stats=big)),
        _call(1, "torch.tensor", [], _tensor(1, "float64", [4], stats=small)),
        _call(2, "torch.tensor", [], _tensor(2, "int64", [4])),
    ]
    calls.append(_call(3, "torch.scatter_add", [_tensor(0, "float64", [1000], stats=big), _tensor(2, "int64", [4]),
                                              _tensor(1, "float64", [4], stats=small)],
                     _tensor(3, "float64", [1000]), kwargs={"dim": {"type": "int", "value": 0},
                                                            "reduce": {"type": "str", "value": "sum"}},
                     arg_defaults={"reduce": {"type": "str", "value": "sum"}}))
    calls.append(_call(4, "torch.Tensor.__repr__", [_tensor(3, "float64", [1000])]))
    facts = derive(Recording.model_validate(_recording(calls)))
    assert facts.api == "torch.scatter_add" and facts.trigger is not None
    assert facts.trigger.params == {"dim": "0"}  # reduce=sum is the default
    assert facts.trigger.special_values == ["nan", "-0.0"]  # written by hand; the random tensor's tiny values not
    assert facts.trigger.dtypes == ["float64"]  # the int64 index is not a dtype condition
    assert facts.kind is None  # one printed value, no mode: facts for the text's pattern, not a pattern


def test_a_run_stopped_before_its_end_keeps_the_texts_api() -> None:
    # the recorder was stopped after the float16 call: the op the text names may simply not have been reached
    stopped = _recording(GOOD["calls"][:4], status="timeout")  # type: ignore[index]
    facts = derive(Recording.model_validate(stopped), "timeout")
    text = BugPattern(kind=PatternKind.Precision_Mismatch, api="torch.tanh", reference_mode=Mode(name="eager"),
                      test_mode=Mode(name="dtype:float16"), confidence=0.7)
    assert facts.api == "torch.sigmoid"
    assert enrich(text, None, facts)[0].api == "torch.tanh"  # type: ignore[union-attr]
    # a run that reached its end and never ran tanh: the recorded op replaces it
    whole = derive(Recording.model_validate(GOOD))
    assert enrich(text, None, whole)[0].api == "torch.sigmoid"  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["torch.Tensor.requires_grad_", "torch.Tensor.retain_grad", "torch.Tensor.detach_"])
def test_autograd_bookkeeping_is_never_the_op_under_test(name: str) -> None:
    from agent.extract.recorded import score

    assert score(name) == 0.0


def test_an_indexed_write_is_the_same_op_as_index_put() -> None:
    from agent.extract.recorded import op_key

    assert op_key("torch.Tensor.__setitem__") == op_key("torch.Tensor.index_put_") == op_key("torch.index_put")


def test_an_indexed_write_counts_as_index_put_having_run_but_is_not_chosen() -> None:
    written = _recording([
        _call(0, "torch.randn", [{"type": "int", "value": 4}], _tensor(0)),
        _call(1, "torch.Tensor.__setitem__", [_tensor(0), {"type": "int", "value": 0},
                                              {"type": "float", "value": 1.0}]),
        _call(2, "torch.sigmoid", [_tensor(0)], _tensor(1)),
        _call(3, "torch.Tensor.__repr__", [_tensor(1)], {"type": "str", "value": "tensor([...])"}),
    ])
    facts = derive(Recording.model_validate(written))
    assert "torch.Tensor.index_put_" in facts.ran and facts.api == "torch.sigmoid"
