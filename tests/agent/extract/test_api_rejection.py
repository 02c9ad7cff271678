"""The offline analyzer never turns a name outside torch's public API into a pattern."""

from __future__ import annotations

import pytest

from agent.extract.analyzer import analyze_issue

FENCE = "```"


def _body(code: str) -> str:
    return f"Wrong values in float16.\n\n{FENCE}python\nimport torch\n{code}\n{FENCE}\n"


@pytest.mark.parametrize("call,reason", [
    ("torch.os.system(command='touch /tmp/transfuzz_pwned')", "re-exported module os"),
    ("torch.hub.load('evil/repo', 'model')", "denied: loads, compiles or parses code"),
    ("torch.sys.exit(3)", "re-exported module sys"),
])
def test_a_code_block_calling_a_denied_api_gives_no_pattern_and_says_why(call: str, reason: str) -> None:
    api = call.split("(", 1)[0]
    code = f"x = torch.randn(4, dtype=torch.float16)\n{call}\ny = {api}(x)\nprint(y, y.float())"
    analysis = analyze_issue(f"{api} gives wrong result in float16 vs float32", _body(code), ["module: half"])
    assert analysis.pattern is None
    assert analysis.rejected_apis[api] == reason
    assert f"{api} rejected" in (analysis.pattern_error or "") and reason in analysis.pattern_error


@pytest.mark.parametrize("call", ["torch.load('weights.pt')", "torch.utils.cpp_extension.load_inline(name='x')"])
def test_loaders_are_tooling_never_the_api_under_test(call: str) -> None:
    api = call.split("(", 1)[0]
    code = f"x = torch.randn(4, dtype=torch.float16)\ny = {call}\nprint({api}(x), y)"
    analysis = analyze_issue(f"{api} gives wrong result in float16 vs float32", _body(code), ["module: half"])
    assert analysis.pattern is None and analysis.pattern_error == "no torch API found in the issue"


def test_a_denied_call_beside_a_real_op_leaves_the_real_op() -> None:
    code = ("x = torch.randn(8, dtype=torch.float16)\ntorch.os.system(command='id')\n"
            "a = torch.cumsum(x, 0)\nb = torch.cumsum(x.float(), 0)\nprint(a.float() - b)")
    analysis = analyze_issue("torch.os.system and torch.cumsum differ in float16", _body(code), ["module: half"])
    assert analysis.pattern is not None and analysis.pattern.api == "torch.cumsum"
    assert "torch.os.system" in analysis.rejected_apis


def test_a_prose_only_mention_of_a_denied_api_is_rejected() -> None:
    analysis = analyze_issue("torch.jit.load returns NaN after jit.trace", "torch.jit.load gives nan values", [])
    assert analysis.pattern is None or not analysis.pattern.api.startswith("torch.jit")


@pytest.mark.parametrize("api", ["torch.os.system", "torch.load", "torch.antigravity_h2.fly"])
def test_semantics_describe_only_checked_names_and_import_nothing(api: str) -> None:
    import sys

    from agent.extract.semantics import UnknownApiError, semantics_for

    with pytest.raises(UnknownApiError):
        semantics_for(api)
    assert "torch.antigravity_h2" not in sys.modules
