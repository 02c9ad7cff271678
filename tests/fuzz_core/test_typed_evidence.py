"""The typed reader of stored evidence (Note [Typed evidence] in fuzz_core/evidence.py)."""

from __future__ import annotations

import json
import subprocess
import sys

from fuzz_core.evidence import (
    Evidence,
    InputDescription,
    Localisation,
    MeasuredFigures,
    Minimised,
    Original,
    Shrink,
)

STORED = {
    "torch_version": "2.13.0+cpu",
    "config": {"num_threads": 2},
    "modes": ["eager", "compile:inductor"],
    "dtype": "float32",
    "executions": 12,
    "compared": 10,
    "max_abs_diff": "inf",
    "first_index": [1],
    "output_shape": [3],
    "tolerance": {"rtol": 1.3e-6, "atol": 1e-5},
    "input": {"origin": "saved", "tensors": [{"shape": [3], "dtype": "torch.float32", "stride": [1],
                                              "contiguous": True}], "ctor": None},
    "first_divergent_op": {"level": "op", "index": 2, "name": "aten.var_mean.correction", "module_type": None,
                           "max_abs_diff": 1.0, "max_rel_diff": 1.0, "introduced": True},
    "minimised": {
        "failure_key": "value:out", "inputs_path": "/tmp/minimised_x.safetensors",
        "input": {"tensors": [{"shape": [0], "dtype": "torch.float32"}]},
        "shrink": {"elements_before": 12, "elements_after": 1, "dims_before": 2, "dims_after": 1, "tries": 9,
                   "accepted": 3, "elapsed_s": 0.5, "exit_reason": "no simpler failing input"},
        "figures": {"output": "out", "reference_mode": "eager", "test_mode": "compile:inductor",
                    "reference_values": [1.0], "test_values": ["inf"], "float64_values": [1.0],
                    "output_dtype": "float32", "reference_error_vs_fp64": 0.0, "test_error_vs_fp64": "inf"},
        "short_repro": "import torch\n", "short_repro_exit": None, "adopted": True, "elapsed_s": 1.5,
        "a_key_from_a_later_version": 1,
    },
    "original": {"reason": "first found", "max_abs_diff": 2.0, "inputs_path": "/tmp/inputs_x.safetensors"},
    "seed": 3,
}


def test_stored_evidence_reads_typed_and_writes_back_as_stored() -> None:
    evidence = Evidence.from_dict(json.loads(json.dumps(STORED)))
    assert isinstance(evidence.minimised, Minimised)
    assert isinstance(evidence.minimised.figures, MeasuredFigures)
    assert evidence.minimised.figures.test_values == ["inf"]
    assert isinstance(evidence.minimised.shrink, Shrink) and evidence.minimised.shrink.elements_after == 1
    assert evidence.minimised.short_repro_exit is None  # stored as null: killed by its timeout
    assert isinstance(evidence.original, Original) and evidence.original.reason == "first found"
    assert evidence.original.evidence.max_abs_diff == 2.0 and evidence.adopted_minimised
    assert evidence.executions == 12 and evidence.compared == 10
    assert evidence.tolerance_used is not None and evidence.tolerance_used.atol == 1e-5
    assert evidence.divergent_op is not None and evidence.divergent_op.name == "aten.var_mean.correction"
    described = evidence.minimised.described_input
    assert isinstance(described, InputDescription) and described.tensors is not None
    assert described.tensors[0] is not None and described.tensors[0].shape == [0]
    assert evidence.to_dict() == STORED  # nothing dropped, nothing added, nested records included


def test_an_old_row_reads_none_where_it_lacks_a_field() -> None:
    evidence = Evidence.from_dict({"max_abs_diff": 1.0})
    assert evidence.minimised is None and evidence.original is None and evidence.localisation is None
    assert evidence.described_input is None and evidence.tolerance_used is None and evidence.divergent_op is None
    assert evidence.bisection is None and evidence.compared is None and not evidence.adopted_minimised
    shrunk = Evidence.from_dict({"minimised": {"skipped": "only confirmed findings with a saved input are minimised"}})
    assert shrunk.minimised is not None and shrunk.minimised.figures is None and shrunk.minimised.shrink is None
    assert Evidence.of(None).minimised is None and Evidence.of("not an object").max_abs_diff is None


def test_a_value_of_the_wrong_type_reads_none_and_is_kept_as_stored() -> None:
    stored = {"minimised": {"figures": "damaged", "short_repro": 5, "failure_key": ["x"]}, "original": "?",
              "localisation": {"first_divergent_op": {"level": "op", "name": 7}}}
    evidence = Evidence.from_dict(stored)
    assert evidence.minimised is not None
    assert evidence.minimised.figures is None and evidence.minimised.short_repro is None
    assert evidence.minimised.failure_key is None
    assert evidence.original is None and not evidence.adopted_minimised
    assert isinstance(evidence.localisation, Localisation)
    assert evidence.localisation.divergent_op is not None and evidence.localisation.divergent_op.name is None
    out = evidence.to_dict()
    assert out["minimised"] == stored["minimised"] and out["original"] == "?"
    assert out["localisation"] == stored["localisation"]
    assert InputDescription.from_dict({"tensors": "?"}).tensors is None  # type: ignore[union-attr]
    assert InputDescription.from_dict({"tensors": [{"shape": [1]}, 3]}).tensors[1] is None  # type: ignore[union-attr,index]


def test_reading_evidence_does_not_import_torch() -> None:
    code = ("import sys; from fuzz_core.evidence import Evidence; Evidence.from_dict({'minimised': {}}); "
            "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
