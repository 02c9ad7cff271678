"""The one elementwise comparison: which elements of a test-mode result match the reference.

Note [One comparison]
`close_enough` is how every part of TransFuzz decides that two results agree: the value oracle
(oracles/compare.py), the float64 rule (oracles/fp64.py), localisation (localise.py), the CGF disagreement
objective (cgf/objectives.py) and both repro templates (repro.py, short_repro.py). The templates paste
these functions into the script as source (inspect.getsource), so a repro compares exactly as the oracle
did. Hence the rules for this module: plain torch only, no name from this package (tolerances are
arguments, read from oracles/tolerance.py by the callers), annotations as strings (a script may run on an
older Python), few lines (the short repro has a line budget), and neither the package's nor the tool's name in their
text (a repro must not read as if it needed the fuzzer).

The rule is torch.isclose's, computed in float64 (complex128) whatever the dtypes: NaN matches NaN, equal
infinities match, otherwise a finite |test - ref| <= atol + rtol * |ref|. An element also matches when
|test - ref| <= `slack`: `rounding_slack` gives a few ulps of float16/bfloat16 (ordinary rounding in the low
dtype, LOW_PRECISION_ULPS in oracles/tolerance.py). torch.isclose is called with positional tolerances so a
repro's checklist (agent/export/rules.py) judges the tolerances where the script passes them, not here.
"""

from __future__ import annotations

import inspect

import torch


def close_enough(ref: "torch.Tensor", test: "torch.Tensor", rtol: float, atol: float, slack: "torch.Tensor | float" = 0.0) -> "torch.Tensor":  # which elements of test match ref: the fuzzer's one comparison, as its oracle runs it
    r, t = (x.detach().to(torch.complex128 if ref.is_complex() or test.is_complex() else torch.float64) for x in (ref, test))
    return torch.isclose(t, r, rtol, atol, True) | ((t - r).abs() <= slack)


def rounding_slack(ref: "torch.Tensor", test: "torch.Tensor", ulps: int) -> "torch.Tensor | float":  # `ulps` float16/bfloat16 ulps per element (0 for other dtypes): rounding in the low dtype, not a bug
    mag = torch.maximum(ref.abs(), test.abs()).detach()
    return ulps * (torch.nextafter(mag, torch.full_like(mag, float("inf"))) - mag).double() if ref.dtype in (torch.float16, torch.bfloat16) else 0.0


def comparison_source(*, with_slack: bool) -> str:
    """The functions above as script text, for the repro templates (Note [One comparison])."""
    functions = (close_enough, rounding_slack) if with_slack else (close_enough,)
    return "\n\n".join(inspect.getsource(f).rstrip("\n") for f in functions) + "\n"
