"""The short repro: exact inline values, checked names only, comments for free text, and it runs with plain torch."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from fuzz_core.campaign import build_target_for
from fuzz_core.inputs import Sample
from fuzz_core.modes import get_mode
from fuzz_core.short_repro import NoShortRepro, float_literal, render_short_repro, tensor_literal
from fuzz_core.spec import HarnessSpec


def _run(script: str, tmp_path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "short.py"
    path.write_text(script)
    return subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_float_literals_give_back_the_same_bits(dtype: torch.dtype) -> None:
    values = torch.tensor([0.1, -1 / 3, 1e-30, 65504.0, 3.14159265, -0.0], dtype=torch.float64).to(dtype)
    for value in values.double().tolist():
        written = float_literal(value, dtype)
        back = torch.tensor([eval(written)], dtype=dtype)  # noqa: S307 - our own literal, checked here
        assert torch.equal(back.view(torch.uint8), torch.tensor([value], dtype=dtype).view(torch.uint8)), written


def test_tensor_literal_keeps_shape_and_nonfinite_values() -> None:
    t = torch.tensor([[float("nan"), float("inf")], [-float("inf"), 2.5]])
    rebuilt = eval(tensor_literal(t), {"torch": torch})  # noqa: S307
    assert rebuilt.shape == t.shape and torch.equal(rebuilt.isnan(), t.isnan())
    assert torch.equal(rebuilt.nan_to_num(), t.nan_to_num())


def test_logit_float16_short_repro_exits_1_and_is_short(tmp_path) -> None:
    spec = HarnessSpec(api="torch.logit", test_mode="dtype:float16", oracle="nan_inf", kind="Precision_Mismatch")
    # eps=1e-6 clamps to 1 - 1e-6 in float32, but that rounds to 1.0 in float16: logit is inf there.
    sample = Sample((torch.tensor([1.0]),), {"eps": 1e-06})
    script = render_short_repro(spec, build_target_for(spec), sample, "nan_inf:out")
    assert len(script.splitlines()) <= 20 and "torch.logit(x0.to(torch.float16), eps=1e-06)" in script
    done = _run(script, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "float64:" in done.stdout


def test_agreeing_input_exits_0(tmp_path) -> None:
    spec = HarnessSpec(api="torch.logit", test_mode="dtype:float16", oracle="nan_inf", kind="Precision_Mismatch")
    script = render_short_repro(spec, build_target_for(spec), Sample((torch.tensor([0.25]),)), "nan_inf:out")
    assert _run(script, tmp_path).returncode == 0


def test_free_text_only_in_comments_and_unchecked_names_refused() -> None:
    spec = HarnessSpec(api="torch.add", kind="Precision_Mismatch\nimport os; os.system('x')")
    script = render_short_repro(spec, build_target_for(spec), Sample((torch.ones(1), torch.ones(1))), "value:out")
    assert all(line.startswith("#") for line in script.splitlines() if "os.system" in line)
    with pytest.raises(NoShortRepro):
        render_short_repro(spec, build_target_for(spec), Sample((torch.ones(1), torch.ones(1))), "value:out;rm")
    with pytest.raises(NoShortRepro):
        render_short_repro(HarnessSpec(api="torch.add", test_mode="grad:numeric"),
                           build_target_for(spec), Sample((torch.ones(1), torch.ones(1))), "value:out")


def test_large_inputs_stay_in_the_safetensors_file() -> None:
    spec = HarnessSpec(api="torch.add", test_mode="compile:inductor")
    with pytest.raises(NoShortRepro, match="elements"):
        render_short_repro(spec, build_target_for(spec), Sample((torch.ones(100), torch.ones(100))), "value:out")


# Each layout/variant mode's short form must build what the mode itself runs (same values, same strides).
LAYOUT_AND_VARIANT_CASES = [
    ("torch.add", "layout:noncontiguous", Sample((torch.tensor([1.5, -2.0, 3.0]), torch.tensor([[1.0], [2.0]])))),
    ("torch.nn.functional.relu", "layout:channels_last", Sample((torch.arange(-4.0, 4.0).reshape(1, 2, 2, 2),))),
    ("torch.logit", "variant:method", Sample((torch.tensor([0.25, 0.5]),), {"eps": 1e-06})),
    ("torch.logit", "variant:inplace", Sample((torch.tensor([0.25, 0.5]),), {"eps": 1e-06})),
    ("torch.logit", "variant:out", Sample((torch.tensor([0.25, 0.5]),), {"eps": 1e-06})),
]


@pytest.mark.parametrize(("api", "mode", "sample"), LAYOUT_AND_VARIANT_CASES, ids=[c[1] for c in LAYOUT_AND_VARIANT_CASES])
def test_layout_and_variant_short_forms_compute_what_the_mode_runs(api: str, mode: str, sample: Sample,
                                                                   tmp_path) -> None:
    spec = HarnessSpec(api=api, test_mode=mode, oracle="value", kind="Layout_Mismatch")
    target = build_target_for(spec)
    script = render_short_repro(spec, target, sample, "value:out")
    assert len(script.splitlines()) <= 20, script
    namespace: dict = {}
    with pytest.raises(SystemExit) as done:
        exec(compile(script, "short.py", "exec"), namespace)  # noqa: S102 - our own template, checked above
    assert done.value.code == 0  # these inputs agree: the script must say so
    expected = get_mode(mode).run(target, sample)
    assert torch.equal(namespace["res"], expected) and namespace["res"].stride() == expected.stride()
    if mode.startswith("layout:"):
        relaid = get_mode(mode).transform(sample.args[0])
        assert torch.equal(namespace["y0"], relaid) and namespace["y0"].stride() == relaid.stride()
        assert not namespace["y0"].is_contiguous() and namespace["x0"].is_contiguous()
    assert _run(script, tmp_path).returncode == 0


def test_out_variant_with_several_outputs_stays_in_the_long_script() -> None:
    spec = HarnessSpec(api="torch.sort", test_mode="variant:out", oracle="value", kind="Variant_Mismatch")
    with pytest.raises(NoShortRepro, match="several outputs"):
        render_short_repro(spec, build_target_for(spec), Sample((torch.tensor([2.0, 1.0]),)), "value:[0]")
