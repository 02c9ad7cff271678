"""Two corpora the verdict engine is held to (issue: verdicts a maintainer can trust).

FALSE_ALARMS: inputs in the classes PyTorch maintainers close as "not a bug" (shared/research/false_alarms.md):
gradients at ±inf/NaN, steps float64 cannot resolve, kinks, `where` gradient leakage, duplicate-index writes,
low precision out of range, at the range edge or with a parameter the dtype cannot hold, uninitialised memory,
random ops, ties, IEEE-demanded NaN, ordinary rounding. None may ever be `confirmed`.

GENUINE: differences that are bugs (planted, or torch 2.13 inconsistencies the project confirms today). Each must
stay `confirmed`. Every case is written in our own words; inputs are fixed by `make_inputs`, work is bounded by
max_executions.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from fuzz_core import HarnessSpec, run_harness
from tests.fuzz_core.planted import NAN_ABOVE_ONE_BACKWARD, WRONG_SQUARE_BACKWARD


@dataclass(frozen=True)
class Case:
    api: str
    inputs: str  # body of make_inputs(seed) with `g` a seeded generator
    reference: str = "grad:numeric"
    test: str = "grad"
    oracle: str = "value"
    target: str = ""  # a planted target's source, when the api is not a torch name

    def spec(self) -> HarnessSpec:
        code = self.target + "\ndef make_inputs(seed):\n    g = torch.Generator().manual_seed(seed)\n"
        code += "".join(f"    {line}\n" for line in self.inputs.strip().splitlines())
        kind = "Gradient_Mismatch" if self.test.startswith("grad") else None
        return HarnessSpec(api=self.api, input_source="code", code=code, reference_mode=self.reference,
                           test_mode=self.test, oracle=self.oracle, kind=kind)


WHERE_SQRT = '''
def target(x):
    return torch.where(x > 0, torch.sqrt(x), torch.zeros_like(x))
'''
WHERE_RECIPROCAL = '''
def target(x):
    return torch.where(x != 0, 1.0 / x, torch.zeros_like(x))
'''
# float32 non-contiguous path that is *more* accurate than the contiguous one (fp64 sides with the test mode).
MORE_ACCURATE_WHEN_STRIDED = '''
def target(x):
    if x.is_contiguous():
        return (x[:, 0::3] + x[:, 1::3]) + x[:, 2::3]
    x = x.double()
    return ((x[:, 0::3] + x[:, 1::3]) + x[:, 2::3]).float()
'''

FALSE_ALARMS: dict[str, Case] = {
    # -- gradients at ±inf/NaN: finite differences are undefined there, autograd is right
    # -- a gradient's negative powers at an input below sqrt(tiny): float32's range, float64 gives 0
    #    (Note [Gradients at tiny inputs] in fuzz_core/confirm.py)
    "grad-norm-negative-order-tiny": Case("torch.norm", "return (torch.tensor([0.0, 1e-30, 0.0]), -1.5), {}",
                                          oracle="nan_inf"),
    "grad-gather-inf": Case("torch.gather", "x = torch.randn(3, 4, generator=g)\nx[0, 1] = float('inf')\n"
                            "return (x, 1, torch.tensor([[0, 0], [1, 2], [3, 3]])), {}"),
    "grad-index_select-neginf": Case("torch.index_select", "x = torch.randn(3, 4, generator=g)\n"
                                     "x[1, 2] = float('-inf')\nreturn (x, 0, torch.tensor([0, 0, 2])), {}"),
    "grad-masked_fill-nan": Case("torch.masked_fill", "x = torch.randn(3, 4, generator=g)\nx[0, 0] = float('nan')\n"
                                 "m = torch.zeros(3, 4, dtype=torch.bool)\nm[0, 0] = True\nreturn (x, m, 1.5), {}"),
    "grad-nansum-nan": Case("torch.nansum", "x = torch.randn(5, generator=g)\nx[2] = float('nan')\nreturn (x,), {}"),
    "grad-index_fill-inf": Case("torch.index_fill", "x = torch.randn(3, 4, generator=g)\nx[0, 1] = float('inf')\n"
                                "return (x, 1, torch.tensor([1]), 2.0), {}"),
    "grad-take_along_dim-inf": Case("torch.take_along_dim", "x = torch.randn(3, 4, generator=g)\n"
                                    "x[2, 3] = float('inf')\nreturn (x, torch.tensor([[0], [1], [0]]), 1), {}"),
    "grad-amax-inf": Case("torch.amax", "x = torch.randn(3, 4, generator=g)\nx[1, 1] = float('inf')\n"
                          "return (x,), {'dim': 1}"),
    "grad-mul-inf": Case("torch.mul", "x = torch.randn(5, generator=g)\nx[2] = float('inf')\n"
                         "return (x, torch.randn(5, generator=g)), {}"),
    "grad-ldexp-inf": Case("torch.ldexp", "x = torch.randn(5, generator=g)\nx[0] = float('inf')\n"
                           "return (x, torch.tensor([1.0, 2.0, 3.0, 0.0, 1.0])), {}"),
    "grad-index_reduce-inf": Case("torch.Tensor.index_reduce", "x = torch.randn(4, 2, generator=g)\n"
                                  "x[3, 0] = float('-inf')\nsrc = torch.randn(3, 2, generator=g)\n"
                                  "return (x, 0, torch.tensor([0, 1, 2]), src, 'amax'), {}"),
    "grad-where-inf-unselected": Case("torch.where", "c = torch.tensor([True, False, True, True, False])\n"
                                      "y = torch.randn(5, generator=g)\ny[0] = float('inf')\n"
                                      "return (c, torch.randn(5, generator=g), y), {}"),
    # -- steps float64 cannot resolve, or that leave the domain
    "grad-l1_loss-huge": Case("torch.nn.functional.l1_loss", "x = torch.tensor([0.5, -1.0, 3.7e19])\n"
                              "return (x, torch.zeros(3)), {}"),
    "grad-sub-1e17": Case("torch.sub", "return (torch.tensor([1e17, 2.0]), torch.tensor([3.0, 1.0])), {}"),
    "grad-kl_div-domain-edge": Case("torch.nn.functional.kl_div", "x = torch.tensor([-3.7, 0.5])\n"
                                    "y = torch.tensor([1e-38, 0.25])\nreturn (x, y), {'reduction': 'sum'}"),
    # -- kinks: one-sided differences disagree, no gradient to compare
    "grad-relu-at-zero": Case("torch.relu", "return (torch.tensor([0.0, 1.0, -0.2]),), {}"),
    "grad-clamp-at-bound": Case("torch.clamp", "return (torch.tensor([0.5, 1.0, -0.2]),), {'min': 0.5}"),
    "grad-abs-at-zero": Case("torch.abs", "return (torch.tensor([0.0, -2.0, 0.75]),), {}"),
    "grad-amax-ties": Case("torch.amax", "return (torch.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.5]]),), {'dim': 1}"),
    # -- torch.where gradient leakage from the branch not taken
    "grad-where-sqrt-leak": Case("planted.where_sqrt", "x = torch.randn(6, generator=g)\nx[0] = -1.0\n"
                                 "return (x,), {}", target=WHERE_SQRT),
    "grad-where-reciprocal-leak": Case("planted.where_reciprocal", "x = torch.randn(6, generator=g)\nx[1] = 0.0\n"
                                       "return (x,), {}", target=WHERE_RECIPROCAL),
    # -- duplicate indices in writes that do not accumulate
    "grad-index_copy-duplicates": Case("torch.index_copy", "x = torch.randn(4, 3, generator=g)\n"
                                       "src = torch.randn(3, 3, generator=g)\n"
                                       "return (x, 0, torch.tensor([1, 1, 2]), src), {}"),
    "grad-scatter-duplicates": Case("torch.scatter", "x = torch.randn(4, generator=g)\n"
                                    "return (x, 0, torch.tensor([1, 1, 2]), torch.randn(3, generator=g)), {}"),
    "grad-index_put-duplicates": Case("torch.index_put", "x = torch.randn(4, generator=g)\n"
                                      "return (x, (torch.tensor([1, 1, 2]),), torch.randn(3, generator=g)), {}"),
    # -- low precision: out of range, edge of range, parameters the dtype cannot hold, ordinary rounding
    "fp16-logit-eps-value": Case("torch.logit", "return (torch.tensor([0.0, 0.25, 0.5, 0.9995, 1.0]),), "
                                 "{'eps': 1e-6}", "eager", "dtype:float16"),
    "fp16-logit-eps-naninf": Case("torch.logit", "return (torch.tensor([0.0, 0.25, 0.5, 0.9995, 1.0]),), "
                                  "{'eps': 1e-6}", "eager", "dtype:float16", "nan_inf"),
    "fp16-prod-edge-times-negzero": Case("torch.prod", "return (torch.tensor([300.0, 300.0, 300.0, -0.0, 2.0]),), {}",
                                         "eager", "dtype:float16"),
    "fp16-exp-out-of-range": Case("torch.exp", "return (torch.tensor([1.0, 12.0, -3.0]),), {}", "eager",
                                  "dtype:float16"),
    "fp16-square-out-of-range": Case("torch.square", "return (torch.tensor([1.0, 300.0, -3.0]),), {}", "eager",
                                     "dtype:float16"),
    "fp16-sigmoid-rounding": Case("torch.sigmoid", "return (torch.randn(64, generator=g) * 4,), {}", "eager",
                                  "dtype:float16"),
    "bf16-matmul-rounding": Case("torch.matmul", "return (torch.randn(8, 16, generator=g), "
                                 "torch.randn(16, 4, generator=g)), {}", "eager", "dtype:bfloat16"),
    # -- central differences made of rounding noise: the output cancels to 0 beside terms of 4e8
    #    (Note [Central differences that move with their step] in fuzz_core/modes/grad.py)
    "grad-cross-cancelling-output": Case("torch.cross", "a = torch.tensor([-8.4, -2.7, -7.9, -3.0, 5.3, -8.4])"
                                         ".unsqueeze(1).expand(6, 3)\n"
                                         "return (a, torch.full((6, 3), -50331648.0)), {'dim': 1}"),
    # -- the domain: uninitialised memory, random ops, ties, IEEE-demanded NaN, a more accurate test mode
    "empty_like-uninitialised": Case("torch.empty_like", "return (torch.randn(4, generator=g),), {}", "eager",
                                     "layout:noncontiguous"),
    "dropout-random": Case("torch.nn.functional.dropout", "return (torch.randn(6, 6, generator=g),), "
                           "{'p': 0.5, 'training': True}", "eager", "layout:noncontiguous"),
    "topk-ties": Case("torch.topk", "return (torch.tensor([[1.0, 2.0, 2.0, 2.0, 0.0]] * 3),), {'k': 2}", "eager",
                      "layout:noncontiguous"),
    "softmax-all-neginf-row": Case("torch.softmax", "x = torch.randn(3, 4, generator=g)\nx[1] = float('-inf')\n"
                                   "return (x,), {'dim': 1}", "eager", "eager", "nan_inf"),
    "log-negative": Case("torch.log", "return (torch.tensor([-1.0, 0.5, 2.0]),), {}", "eager", "eager", "nan_inf"),
    # targets that are no probabilities (a fuzzer's witness): the contiguous and the strided formulation of the loss
    # round differently at 1e22 (Note [Undefined writes and leaking branches], fuzz_core/oracles/defined_input.py)
    "linear_cross_entropy-target-not-probabilities": Case(
        "torch.nn.functional.linear_cross_entropy",
        "x = torch.tensor([-1701943.0, -1452246.0, 45168.0, 167802.0, -444947.0, -778570.0, 50147000.0, 1.0])\n"
        "w = torch.full((8, 8), -50331648.0)\nw.view(-1)[[0, 1, 2, 3, 4, 5, 7, 34, 49]] = 0.0\n"
        "t = torch.tensor([0.0, 387403.0, 0.0, 46519072.0, 3884500.0, 613939.0, -1817878.0, 0.0])\n"
        "return (x, w, t), {}", "eager", "layout:noncontiguous"),
    # a bilinear interpolation against its decomposition on inputs at float32's edge: the decomposition forms b - a,
    # which overflows where the kernel's weighted sum (a quarter of each, 0.75) does not, and the weighted sum of the
    # magnitudes (1.5e38) stays below the edge (Note [Inputs at the range edge], fuzz_core/confirm.py)
    "interpolate-decomposition-at-range-edge": Case(
        "torch.nn.functional.interpolate", "x = torch.tensor([[[[3.0e38, -3.0e38], [1.0, 2.0]]]])\n"
        "return (x,), {'size': (1, 1), 'mode': 'bilinear', 'align_corners': False}", "eager", "variant:decomp"),
    "strided-more-accurate": Case("planted.more_accurate", "x = torch.randn(8, 300, generator=g)\n"
                                  "x[:, ::3] = 1e8\nx[:, 2::3] = -1e8\nreturn (x,), {}", "eager",
                                  "layout:noncontiguous", target=MORE_ACCURATE_WHEN_STRIDED),
}

# A mean whose sum is kept in the input dtype: float16 overflows where PyTorch accumulates means in float.
HALF_ACCUMULATING_MEAN = '''
def target(x):
    return x.sum(dtype=x.dtype) / x.numel()
'''

GENUINE: dict[str, Case] = {
    "planted-wrong-backward": Case("planted.square", "return (torch.randn(3, 4, generator=g),), {}",
                                   target=WRONG_SQUARE_BACKWARD),
    # a tiny input is present, but the NaN gradient is at an element of ordinary size: not the dtype's range
    "planted-nan-backward-beside-a-tiny-input": Case("planted.cube", "return (torch.tensor([1e-30, 2.0, 0.5]),), {}",
                                                     oracle="nan_inf", target=NAN_ABOVE_ONE_BACKWARD),
    "planted-fp16-mean-accumulates-in-half": Case("planted.mean", "return (torch.full((64,), 2000.0),), {}", "eager",
                                                  "dtype:float16", target=HALF_ACCUMULATING_MEAN),
}
GENUINE_COMPILED: dict[str, Case] = {
    # torch 2.13: inductor's var squares before it subtracts the mean (NaN from inf - inf); eager's Welford stays
    # finite. The inputs keep the sum of squared deviations (~1e36) far inside float32's range, so no float
    # accumulator would overflow (Note [A float accumulator's own range]).
    "inductor-var-overflow": Case("torch.var", "return (torch.tensor([2e19, 2e19, 2e19, 2.1e19]),), {}", "eager",
                                  "compile:inductor"),
    "inductor-std-overflow": Case("torch.std", "return (torch.tensor([2e19, 2.1e19, 2e19]),), {}", "eager",
                                  "compile:inductor"),
    # torch 2.13: inductor's vectorised acosh squares its input, inf for 8.5e37 where eager gives 88.03; the input
    # is a quarter of float32's maximum, so the range-edge rules do not excuse it (Note [Inputs at the range edge])
    "inductor-acosh-overflow": Case("torch.acosh", "return (torch.full((64,), 8.5e37),), {}", "eager",
                                    "compile:inductor"),
}


@pytest.mark.parametrize("name", sorted(FALSE_ALARMS))
def test_known_false_alarm_is_never_confirmed(name: str, tmp_path) -> None:
    result = run_harness(FALSE_ALARMS[name].spec(), max_executions=25, workdir=tmp_path, instrument="none")
    assert result.verdict != "confirmed", result.reason


@pytest.mark.parametrize("name", sorted(GENUINE))
def test_genuine_bug_stays_confirmed(name: str, tmp_path) -> None:
    result = run_harness(GENUINE[name].spec(), max_executions=25, workdir=tmp_path, instrument="none")
    assert result.verdict == "confirmed", result.reason


@pytest.mark.compile
@pytest.mark.parametrize("name", sorted(GENUINE_COMPILED))
def test_genuine_compiled_bug_stays_confirmed(name: str, tmp_path) -> None:
    result = run_harness(GENUINE_COMPILED[name].spec(), max_executions=4, workdir=tmp_path, instrument="none")
    assert result.verdict == "confirmed", result.reason


def test_the_corpus_is_large_enough() -> None:
    assert len(FALSE_ALARMS) >= 30 and len(GENUINE) + len(GENUINE_COMPILED) >= 4


def test_a_layout_query_under_a_layout_mode_is_not_applicable(tmp_path) -> None:
    # is_contiguous answers a question about the layout: a non-contiguous copy changes the answer by definition.
    spec = Case("torch.Tensor.is_contiguous", "return (torch.randn(4, 3, generator=g),), {}", "eager",
                "layout:noncontiguous").spec()
    result = run_harness(spec, max_executions=10, workdir=tmp_path, instrument="none")
    assert result.verdict == "not_applicable", result.reason
    assert "layout" in result.reason
