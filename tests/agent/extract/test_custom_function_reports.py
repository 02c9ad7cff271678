"""Note [A custom Function under test] (scan.py): a report about how compiled code runs a user's autograd.Function
names the construct, which the fuzz core checks on Functions of its own (Note [Custom autograd Functions]).

Reports written for these tests, in the shape pt2 tracker reports take.
"""

from __future__ import annotations

from agent.extract.analyzer import analyze_issue
from agent.harness.generate import build_spec
from agent.transfer.profile import ApiProfile
from agent.transfer.rank import gate
from fuzz_core import HarnessSpec
from fuzz_core.custom_functions import CUSTOM_FUNCTION_API, TIED_INPUTS
from tests.agent.extract.tracker_shaped import _describe as describe

PT2 = ["oncall: pt2", "high priority"]

HALVED = (
    "import torch\n\nclass Mix(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, p, q):\n"
    "        ctx.save_for_backward(p, q)\n        return p * q + q\n\n    @staticmethod\n"
    "    def backward(ctx, g):\n        p, q = ctx.saved_tensors\n        return g * q, g * (p + 1)\n\n"
    "def loss(t):\n    return Mix.apply(t, t).sum()\n\n"
    "t = torch.linspace(-1, 1, 6, requires_grad=True)\nloss(t).backward()\nexpected = t.grad.clone()\n"
    "t.grad = None\ntorch.compile(loss)(t).backward()\nprint(expected, t.grad)\n"
)

IGNORED = (
    "import torch\nfrom torch.autograd import Function\n\nclass Hard(Function):\n    @staticmethod\n"
    "    def forward(ctx, v):\n        return torch.sign(v)\n\n    @staticmethod\n    def backward(ctx, g):\n"
    "        return g\n\nf = lambda v: Hard.apply(v).mean()\nv = torch.randn(8, requires_grad=True)\n"
    "g_eager = torch.autograd.grad(f(v), v)[0]\ng_comp = torch.autograd.grad(torch.compile(f)(v), v)[0]\n"
    "print(g_eager, g_comp)\n"
)


def _issue(code: str, prose: str) -> str:
    """The tracker's bug template around the snippet, a versions block and the pt2 cc line included."""
    return describe(prose, code)


def test_a_function_given_one_tensor_twice_under_compile_names_the_construct_and_that_call() -> None:
    a = analyze_issue("compiled gradient of a custom Function is half of eager's",
                      _issue(HALVED, "Eager sums both gradients of t; the compiled backward keeps one."), PT2)
    assert a.pattern is not None, a.pattern_error
    assert a.pattern.api == CUSTOM_FUNCTION_API
    assert a.pattern.test_mode.name == "grad:compile:inductor"
    assert a.pattern.trigger.params == {"function": TIED_INPUTS}


def test_a_user_backward_ignored_by_compiled_code_names_the_construct_not_the_op_inside() -> None:
    a = analyze_issue("torch.compile ignores my straight-through backward",
                      _issue(IGNORED, "The compiled gradient is all zeros; eager gives the incoming gradient."), PT2)
    assert a.pattern is not None, a.pattern_error
    assert a.pattern.api == CUSTOM_FUNCTION_API and a.pattern.trigger.params == {}


def test_a_function_that_is_never_applied_leaves_the_op_as_the_api() -> None:
    code = IGNORED.replace("Hard.apply(v).mean()", "torch.sign(v).mean()")
    a = analyze_issue("torch.compile gradient of sign differs",
                      _issue(code, "The compiled gradient differs from eager."), PT2)
    assert a.pattern is not None and a.pattern.api != CUSTOM_FUNCTION_API


def test_a_function_compared_in_half_precision_is_not_read_as_the_construct() -> None:
    code = (IGNORED.split("f = lambda")[0] + "v = torch.randn(8)\nprint(Hard.apply(v.half()).float() - Hard.apply(v))\n")
    a = analyze_issue("sign gives a different result in float16",
                      _issue(code, "The float16 result differs from float32."), ["module: half"])
    assert a.pattern is not None and (a.pattern.api, a.pattern.test_mode.name) == ("torch.sign", "dtype:float16")


def test_the_pattern_becomes_a_harness_of_the_fuzz_cores_own_functions() -> None:
    a = analyze_issue("compiled gradient of a custom Function is half of eager's",
                      _issue(HALVED, "Eager sums both gradients of t; the compiled backward keeps one."), PT2)
    assert a.pattern is not None
    spec = HarnessSpec(**build_spec(a.pattern, a.pattern.api, a.pattern.trigger.model_dump(), in_opinfo=False,
                                    seed_key="t"))
    assert (spec.api, spec.reference_mode, spec.test_mode) == (CUSTOM_FUNCTION_API, "grad", "grad:compile:inductor")
    assert spec.trigger["params"] == {"function": TIED_INPUTS}


def test_a_custom_function_pattern_is_not_transferred_to_ops() -> None:
    a = analyze_issue("torch.compile ignores my straight-through backward",
                      _issue(IGNORED, "The compiled gradient is all zeros; eager gives the incoming gradient."), PT2)
    assert a.pattern is not None
    sign = ApiProfile(api="torch.sign", category="pointwise", summary="signs", params=("input",), roles=frozenset(),
                      role_params=(), dtypes=frozenset({"float32"}), n_tensor_inputs=1, has_out=True,
                      has_inplace=True, has_method=True, is_module=False)
    assert gate(a.pattern, sign) is not None


def test_a_model_answer_may_only_name_one_of_the_fuzz_cores_functions() -> None:
    from agent.patterns import BugPattern

    def answer(function: str) -> BugPattern:
        return BugPattern.model_validate({
            "kind": "Gradient_Mismatch", "api": CUSTOM_FUNCTION_API, "reference_mode": {"name": "eager"},
            "test_mode": {"name": "grad:compile:inductor"}, "trigger": {"params": {"function": function}}})

    assert answer(TIED_INPUTS).trigger.params == {"function": TIED_INPUTS}
    made_up = answer("my_custom_op")
    assert made_up.trigger.params == {} and "not one of" in made_up.trigger.dropped_params["function"]
