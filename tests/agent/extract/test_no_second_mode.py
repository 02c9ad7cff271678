"""Note [A wrong result with no second mode]: the op against its own decomposition.

The reports are written for these tests, in our own words.
"""

from __future__ import annotations

from agent.extract.analyzer import analyze_issue

REGRESSION = """### 🐛 Describe the bug

Upsampling to a single pixel gives a different value since the upgrade.

```python
import torch
torch.manual_seed(0)
x = torch.rand(1, 2, 6, 6)
print(torch.nn.functional.interpolate(x, size=(1, 1), mode="bilinear", align_corners=False))
```

With the previous release this printed 0.51 and 0.47; now it prints 0.21 and 0.33, which cannot be right.
"""


def test_a_confirmed_regression_with_no_second_mode_checks_the_op_against_its_decomposition() -> None:
    analysis = analyze_issue("interpolate returns different values after upgrading", REGRESSION,
                             ["high priority", "module: correctness (silent)"])
    pattern = analysis.pattern
    assert pattern is not None, analysis.pattern_error
    assert (pattern.kind.value, pattern.api, pattern.reference_mode.name, pattern.test_mode.name) == (
        "Variant_Mismatch", "torch.nn.functional.interpolate", "eager", "variant:decomp")


def test_a_report_read_as_no_silent_bug_gets_no_fallback_pattern() -> None:
    body = "How do I upsample to one pixel?\n\n```python\nimport torch\ntorch.nn.functional.interpolate(torch.rand(1, 1, 4, 4), size=(1, 1))\n```\n"
    analysis = analyze_issue("Question about interpolate", body, ["triaged"])
    assert not analysis.triage.is_silent_bug
    assert analysis.pattern is None


def test_a_second_mode_in_the_report_wins_over_the_fallback() -> None:
    body = REGRESSION.replace("print(torch.nn", "print(torch.compile(torch.nn.functional.interpolate)(x, size=(1, 1), "
                                               "mode=\"bilinear\"), torch.nn")
    analysis = analyze_issue("interpolate: torch.compile gives a wrong result", body, ["oncall: pt2"])
    assert analysis.pattern is not None and analysis.pattern.test_mode.name == "compile:inductor"
