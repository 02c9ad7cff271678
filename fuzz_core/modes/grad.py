"""`grad`, `grad:compile:<backend>`, `grad:numeric`: reverse-mode gradients of the target as the output.

The output of a gradient mode is the tuple of input gradients of <v, f(x)> for a fixed cotangent v
(drawn from a fixed seed, the same in every mode), one entry per floating input tensor. So the
usual comparison, confirmation checks and fp64 rule apply to gradients unchanged:

- `grad` (also `grad:eager`): eager autograd in the input dtype.
- `grad:compile:<backend>`: the forward through torch.compile (reusing compile mode's cached
  callables), so the backward is the one AOTAutograd compiled.
- `grad:numeric`: central differences in float64 with gradcheck's eps (1e-6), cast to the input dtype.

Note [Gradient fp64 reference]
The float64 reference of every gradient mode is the numerical one (`fp64_gradient`), not fp64
autograd: a wrong backward formula is wrong in float64 too. Where the one-sided differences
disagree (a kink: relu or abs at 0), the point is not differentiable: as a *mode* `grad:numeric`
raises NonDifferentiable there (the reference then rejects the input, which is skipped), while as
the fp64 *reference* it returns the central difference, a valid subgradient for the convex kinks
(norm, abs) at which PyTorch documents one — so a NaN/Inf analytic gradient there is still a finding
(false_alarms.md: NaN gradients where a subgradient is defined are real bugs).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes.base import Mode, NotApplicable, bound_callable
from fuzz_core.target import Target
from fuzz_core.tensors import map_tensors, output_leaves

GRADCHECK_EPS = 1e-6  # torch.autograd.gradcheck's default eps
GRADCHECK_ATOL, GRADCHECK_RTOL = 1e-5, 1e-3  # gradcheck's defaults: one-sided differences must agree this well
MAX_NUMERIC_ELEMENTS = 1024  # central differences cost 2 forward calls per input element
COTANGENT_SEED = 20240601
NUMERIC_ROUNDING_ULPS = 8  # rounding error of the float64 objective, in ulps of its magnitude


class NonDifferentiable(RuntimeError):
    """The input sits on a kink of the function: one-sided differences disagree, no gradient to compare."""


def _differentiable(t: Any) -> bool:
    return isinstance(t, torch.Tensor) and t.is_floating_point() and t.layout == torch.strided


def _with_leaves(sample: Sample, dtype: torch.dtype | None = None) -> tuple[Any, list[torch.Tensor]]:
    """The sample's tree with fresh leaf tensors that require grad (floating, strided inputs only)."""
    leaves: list[torch.Tensor] = []

    def leaf(t: torch.Tensor) -> torch.Tensor:
        if not _differentiable(t):
            return t.detach().clone()
        fresh = t.detach().to(dtype or t.dtype).clone().requires_grad_(True)
        leaves.append(fresh)
        return fresh

    return map_tensors(sample.tree(), leaf), leaves


def _cotangents(out: Any) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(output leaf, cotangent) for each floating output; the cotangent depends only on shape and index."""
    pairs = []
    for index, (_, leaf) in enumerate(output_leaves(out)):
        if isinstance(leaf, torch.Tensor) and leaf.is_floating_point() and leaf.layout == torch.strided:
            gen = torch.Generator().manual_seed(COTANGENT_SEED + index)
            pairs.append((leaf, torch.randn(leaf.shape, generator=gen, dtype=torch.float64).to(leaf.dtype)))
    return pairs


def _objective(out: Any) -> torch.Tensor:
    """<v, f(x)> summed over floating outputs, in float64 so the sum adds no rounding of its own."""
    total = torch.zeros((), dtype=torch.float64)
    for leaf, v in _cotangents(out):
        total = total + (leaf.double() * v.double()).sum()
    return total


def _objective_scale(out: Any) -> float:
    """sum |v * f(x)|: the magnitude the float64 objective's rounding error is relative to."""
    total = 0.0
    for leaf, v in _cotangents(out):
        total += float((leaf.double() * v.double()).abs().sum())
    return total


def reverse_gradients(forward: Callable[[tuple, dict], Any], sample: Sample) -> tuple[torch.Tensor, ...]:
    """Gradients of <v, forward(sample)> w.r.t. the sample's floating inputs (zeros where unused)."""
    tree, leaves = _with_leaves(sample)
    if not leaves:
        raise NotApplicable("gradient modes need a floating-point input")
    with torch.enable_grad():
        out = forward(*tree)
        pairs = [(leaf, v) for leaf, v in _cotangents(out) if leaf.requires_grad]
        if not pairs:
            raise NotApplicable("no floating output depends differentiably on the inputs")
        grads = torch.autograd.grad([leaf for leaf, _ in pairs], leaves, [v for _, v in pairs], allow_unused=True)
    return tuple(torch.zeros_like(x) if g is None else g.detach() for g, x in zip(grads, leaves))


def numeric_gradients(target: Target, sample: Sample, *, strict: bool) -> tuple[torch.Tensor, ...]:
    """Central differences of <v, f(x)> in float64 (gradcheck's eps), in float64.

    strict: raise NonDifferentiable where the one-sided differences disagree beyond gradcheck's
    tolerance (Note [Gradient fp64 reference]).
    """
    tree, leaves = _with_leaves(sample, torch.float64)
    if not leaves:
        raise NotApplicable("gradient modes need a floating-point input")
    if sum(x.numel() for x in leaves) > MAX_NUMERIC_ELEMENTS:
        raise NotApplicable(f"numeric gradients need 2 calls per element; more than {MAX_NUMERIC_ELEMENTS} inputs")
    fn = bound_callable(target, sample, dtype=torch.float64 if target.is_module_class else None)
    args, kwargs = tree

    def value() -> float:
        with torch.no_grad():
            return float(_objective(fn(*args, **kwargs)))

    centre = value()
    if not math.isfinite(centre):
        # One NaN/Inf output makes every difference NaN: the input is outside the domain of the check.
        raise NonDifferentiable("the float64 function value is not finite here: no numeric derivative")
    with torch.no_grad():
        scale = _objective_scale(fn(*args, **kwargs))
    noise = NUMERIC_ROUNDING_ULPS * scale * 2.0 ** -52 / (2 * GRADCHECK_EPS)
    if not math.isfinite(noise) or noise > GRADCHECK_ATOL:
        # Note [Numeric gradient resolution]: a step of eps moves the objective by eps * grad, which
        # float64 cannot resolve beside terms of this size (a huge element elsewhere in the input);
        # the differences would be rounding noise, so they judge nothing.
        raise NonDifferentiable(f"float64 central differences cannot resolve a step of {GRADCHECK_EPS:g} beside "
                                f"output terms of total magnitude {scale:.3g} (noise ~{noise:.3g})")
    grads = []
    for x in leaves:
        grad = torch.zeros_like(x, dtype=torch.float64)
        flat, flat_grad = x.data.view(-1), grad.view(-1)
        for i in range(flat.numel()):
            original = float(flat[i])
            # Note [Actual steps]: x + eps is rounded; divide by the steps float64 really took, so a large
            # element (ulp 7e-9 at 5e7) does not bias the difference by ulp/eps.
            high, low = original + GRADCHECK_EPS, original - GRADCHECK_EPS
            flat[i] = high
            up = value()
            flat[i] = low
            down = value()
            flat[i] = original
            if not (math.isfinite(up) and math.isfinite(down)):
                # A step of eps leaves the function's domain (a target of kl_div at 1e-308 stepped below
                # zero, log at the edge): the differences say nothing about the analytic gradient here.
                raise NonDifferentiable(f"a step of {GRADCHECK_EPS:g} at element {i} leaves the function's "
                                        f"domain (float64 value {up if not math.isfinite(up) else down})")
            forward_diff, backward_diff = (up - centre) / (high - original), (centre - down) / (original - low)
            if strict and abs(forward_diff - backward_diff) > GRADCHECK_ATOL + GRADCHECK_RTOL * abs(backward_diff):
                raise NonDifferentiable(f"one-sided differences disagree at element {i} "
                                        f"({forward_diff:.6g} vs {backward_diff:.6g}): not differentiable here")
            flat_grad[i] = (up - down) / (high - low)
        grads.append(grad)
    return tuple(grads)


class GradMode(Mode):
    """Analytic reverse-mode gradients, through eager or through another (forward) mode such as compile."""

    inner: Mode | None = None

    def check(self, target: Target, sample: Sample) -> None:
        if not any(_differentiable(t) for t in map_tensors_leaves(sample)):
            raise NotApplicable(f"{self.name}: the call has no floating-point input to differentiate")
        if self.inner is not None:
            self.inner.check(target, sample)

    def run(self, target: Target, sample: Sample) -> Any:
        if self.inner is None:
            fn = bound_callable(target, sample)
            return reverse_gradients(lambda args, kwargs: fn(*args, **kwargs), sample)
        inner = self.inner
        return reverse_gradients(lambda args, kwargs: inner.run(target, sample.with_tree((args, kwargs))), sample)

    def fp64_reference(self, target: Target, sample: Sample) -> Any:
        """Note [Gradient fp64 reference]: float64 central differences, kinks answered by a subgradient."""
        return numeric_gradients(target, sample, strict=False)

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        forward = "fn" if self.inner is None else f"torch.compile(fn, backend={self.inner.name.split(':', 1)[1]!r})"
        return f'''
def run_mode(fn, args, kwargs):
    import torch._inductor.config
    torch._inductor.config.fallback_random = True
    forward = {forward}
    leaves = []
    def leaf(t):
        if t.is_floating_point():
            t = t.detach().clone().requires_grad_(True)
            leaves.append(t)
        return t
    args, kwargs = torch.utils._pytree.tree_map_only(torch.Tensor, leaf, (args, kwargs))
    out = forward(*args, **kwargs)
    outs = [o for o in torch.utils._pytree.tree_leaves(out) if isinstance(o, torch.Tensor) and o.is_floating_point()]
    vs = [torch.randn(o.shape, generator=torch.Generator().manual_seed({COTANGENT_SEED} + i), dtype=torch.float64).to(o.dtype)
          for i, o in enumerate(outs)]
    return torch.autograd.grad(outs, leaves, vs, allow_unused=True)
'''


class NumericGradMode(GradMode):
    """`grad:numeric`: float64 central differences cast to the input dtype; a kink rejects the input."""

    def run(self, target: Target, sample: Sample) -> Any:
        dtypes = [t.dtype for t in map_tensors_leaves(sample) if _differentiable(t)]
        grads = numeric_gradients(target, sample, strict=True)
        return tuple(g.to(dtype) for g, dtype in zip(grads, dtypes))

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        return f'''
def run_mode(fn, args, kwargs):
    # float64 central differences of <v, fn(x)> with eps {GRADCHECK_EPS}, as torch.autograd.gradcheck takes them
    is_leaf = lambda t: isinstance(t, torch.Tensor) and t.is_floating_point()
    args, kwargs = torch.utils._pytree.tree_map(lambda t: t.detach().double().clone() if is_leaf(t) else t, (args, kwargs))
    leaves = [t for t in torch.utils._pytree.tree_leaves((args, kwargs)) if is_leaf(t)]
    def objective():
        outs = [o for o in torch.utils._pytree.tree_leaves(fn(*args, **kwargs))
                if isinstance(o, torch.Tensor) and o.is_floating_point()]
        return float(sum((o.double() * torch.randn(o.shape, generator=torch.Generator().manual_seed({COTANGENT_SEED} + i),
                                                   dtype=torch.float64)).sum() for i, o in enumerate(outs)))
    grads = []
    for x in leaves:
        flat, grad = x.view(-1), torch.zeros(x.numel(), dtype=torch.float64)
        for i in range(flat.numel()):
            keep = float(flat[i])
            high, low = keep + {GRADCHECK_EPS}, keep - {GRADCHECK_EPS}
            flat[i] = high; up = objective()
            flat[i] = low; down = objective()
            flat[i] = keep
            grad[i] = (up - down) / (high - low)
        grads.append(grad.view(x.shape))
    return tuple(grads)
'''


def map_tensors_leaves(sample: Sample) -> list[torch.Tensor]:
    from fuzz_core.tensors import tensor_leaves

    return tensor_leaves(sample.tree())


def make_grad(name: str, options: dict) -> Mode:
    """`grad`, `grad:eager`, `grad:numeric`, `grad:<forward mode>` (e.g. grad:compile:inductor)."""
    if name in ("grad", "grad:eager"):
        return GradMode(name=name, options=options)
    if name == "grad:numeric":
        return NumericGradMode(name=name, options=options)
    inner_name = name.split(":", 1)[1] if ":" in name else ""
    if not inner_name.startswith("compile:"):
        raise KeyError(name)
    from fuzz_core.modes.compile import make_compile

    mode = GradMode(name=name, options=options)
    mode.inner = make_compile(inner_name, options)
    mode.dispatch_observable = mode.inner.dispatch_observable
    return mode
