"""`grad`, `grad:compile:<backend>`, `grad:numeric`: reverse-mode gradients of the target as the output.

The output of a gradient mode is the tuple of input gradients of <v, f(x)> for a fixed cotangent v
(drawn from a fixed seed, the same in every mode), one entry per differentiable input tensor (floating,
strided, and not an index or mask argument). So the usual comparison, confirmation checks and fp64 rule
apply to gradients unchanged:

- `grad` (also `grad:eager`): eager autograd in the input dtype.
- `grad:compile:<backend>`: the forward through torch.compile (reusing compile mode's cached
  callables), so the backward is the one AOTAutograd compiled.
- `grad:device:cuda`: the forward on the GPU (inputs moved there, outputs moved back, both differentiable), so
  the backward runs the GPU's kernels; against the CPU's `grad` it is the cpu-vs-cuda check of a backward
  (Note [Gradients on a device]).
- `grad:numeric`: central differences in float64 with gradcheck's eps (1e-6), cast to the input dtype.

Note [Numeric gradients are defined only where they are defined]
Finite differences judge nothing at ±inf/NaN inputs (x + eps is x), where x ± eps is not resolvable in
float64 (a huge element), where a step leaves the function's domain (a NaN/Inf value at x ± eps), or at a
kink (the one-sided differences disagree). `numeric_gradients` raises NonDifferentiable in each case, and a
NaN/Inf numerical gradient is never returned: it is never evidence against autograd (false_alarms.md).

Note [Gradient fp64 reference]
The float64 reference of a gradient mode is float64 *autograd* (the analytic gradient on float64 copies),
as PyTorch's own accuracy checks compare against a higher-precision run of the same formula. Float64
central differences arbitrate only where they are well conditioned (Note above) and the point is smooth:
forward-mode AD, a second analytic side, gives the same directional derivative at x and at two
neighbours x ± δu (∇Fuzz's differentiability check). Only then does a float64 autograd gradient that
differs from the central differences lose: that is a wrong backward formula, wrong in float64 too.
Where float64 autograd is NaN/Inf at a finite input whose lenient central difference is finite (norm or
abs at 0: a subgradient is defined there), the central difference fills in (a NaN gradient where a
subgradient exists is a real bug, false_alarms.md). `reference_basis` on the mode records which side
the last reference came from and why.

Note [Central differences that move with their step]
The resolution check (Note [Numeric gradient resolution]) bounds the float64 objective's rounding by the size of
its output terms, and an output can cancel to nothing while its intermediates are large: torch.cross of (v, v, v)
with a row of equal -5e7 is exactly 0, yet a step of 1e-6 in b moves v*b_z - v*b_y by 8e-6 beside terms of 4e8,
whose rounding (6e-8) is 1% of it. Those central differences were "well conditioned" and overruled float64
autograd, and float32 autograd (right to 6e-8) was confirmed 1.8% wrong. A central difference that is truncation
error only barely moves when the step grows (O(h^2)); one made of rounding noise moves as 1/h. So before the
differences overrule float64 autograd they are taken again with a step COARSE_STEP_FACTOR times larger, and
where the two disagree (gradcheck's tolerances) they are noise: float64 autograd stays the reference.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable

import torch

from fuzz_core.custom_functions import CUSTOM_FUNCTION_API
from fuzz_core.inputs import Sample
from fuzz_core.modes.base import Mode, NotApplicable, bound_callable
from fuzz_core.target import Target
from fuzz_core.tensors import map_tensors, output_leaves, tensor_leaves

GRADCHECK_EPS = 1e-6  # torch.autograd.gradcheck's default eps
GRADCHECK_ATOL, GRADCHECK_RTOL = 1e-5, 1e-3  # gradcheck's defaults: one-sided differences must agree this well
MAX_NUMERIC_ELEMENTS = 1024  # central differences cost 2 forward calls per input element
COTANGENT_SEED = 20240601
DIRECTION_SEED = 20240602  # the tangent of the forward-mode differentiability check
COARSE_STEP_FACTOR = 4.0  # Note [Central differences that move with their step]
NUMERIC_ROUNDING_ULPS = 8  # rounding error of the float64 objective, in ulps of its magnitude
# Forward-mode differentiability check: neighbours at x ± NEIGHBOUR_STEP * (1 + max|x|) * u must give the same
# directional derivative within this relative tolerance (plus gradcheck's atol), else a kink lies in between.
NEIGHBOUR_STEP = 1e-4
NEIGHBOUR_RTOL = 1e-2
# Arguments that select positions rather than carry values: never differentiated, even when floating.
INDEX_ARGUMENT_NAMES = frozenset({"index", "indices", "mask", "idx", "offsets", "lengths", "input_lengths",
                                  "target_lengths", "boundaries", "sorted_sequence"})


class NonDifferentiable(NotApplicable):
    """No numerical derivative is defined at this input (non-finite value, unresolvable step, a step out of
    the domain, or a kink): the numeric side cannot judge it, so the input is not applicable there."""


def _differentiable(t: Any) -> bool:
    return isinstance(t, torch.Tensor) and t.is_floating_point() and t.layout == torch.strided


def index_like_positions(target: Target | None, sample: Sample) -> frozenset[int]:
    """Positions (in tensor_leaves order) of tensors passed as index/mask arguments, by keyword or by the
    parameter name a Python signature gives the positional slot."""
    names: list[str] = []
    if target is not None and not target.is_module_class:
        try:
            names = [p.name for p in inspect.signature(target.fn).parameters.values()
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):  # builtins without a Python signature
            names = []
    excluded: set[int] = set()
    position = 0
    for slot, value in [(names[i] if i < len(names) else "", v) for i, v in enumerate(sample.args)] + list(
            sample.kwargs.items()):
        leaves = tensor_leaves(value)
        if slot in INDEX_ARGUMENT_NAMES:
            excluded.update(range(position, position + len(leaves)))
        position += len(leaves)
    return frozenset(excluded)


def _with_leaves(sample: Sample, dtype: torch.dtype | None = None, exclude: frozenset[int] = frozenset()
                 ) -> tuple[Any, list[torch.Tensor]]:
    """The sample's tree with fresh leaf tensors that require grad (floating, strided, non-index inputs only)."""
    leaves: list[torch.Tensor] = []
    position = iter(range(1 << 30))

    def leaf(t: torch.Tensor) -> torch.Tensor:
        here = next(position)
        if not _differentiable(t) or here in exclude:
            return t.detach().to(dtype).clone() if dtype is not None and t.is_floating_point() else t.detach().clone()
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


def reverse_gradients(forward: Callable[[tuple, dict], Any], sample: Sample, *, dtype: torch.dtype | None = None,
                      exclude: frozenset[int] = frozenset()) -> tuple[torch.Tensor, ...]:
    """Gradients of <v, forward(sample)> w.r.t. the sample's differentiable inputs (zeros where unused);
    `dtype` casts every floating input first (float64 autograd for the reference)."""
    tree, leaves = _with_leaves(sample, dtype, exclude)
    if not leaves:
        raise NotApplicable("gradient modes need a floating-point input")
    with torch.enable_grad():
        out = forward(*tree)
        pairs = [(leaf, v) for leaf, v in _cotangents(out) if leaf.requires_grad]
        if not pairs:
            raise NotApplicable("no floating output depends differentiably on the inputs")
        grads = torch.autograd.grad([leaf for leaf, _ in pairs], leaves, [v for _, v in pairs], allow_unused=True)
    return tuple(torch.zeros_like(x) if g is None else g.detach() for g, x in zip(grads, leaves))


def numeric_gradients(target: Target, sample: Sample, *, strict: bool,
                      step: float = GRADCHECK_EPS) -> tuple[torch.Tensor, ...]:
    """Central differences of <v, f(x)> in float64 (gradcheck's eps unless `step` says), in float64, only where
    they are defined (Note [Numeric gradients are defined only where they are defined]).

    strict: also raise NonDifferentiable where the one-sided differences disagree beyond gradcheck's
    tolerance (a kink); lenient, the central difference is returned there (a subgradient at convex kinks).
    """
    exclude = index_like_positions(target, sample)
    tree, leaves = _with_leaves(sample, torch.float64, exclude)
    if not leaves:
        raise NotApplicable("gradient modes need a floating-point input")
    if sum(x.numel() for x in leaves) > MAX_NUMERIC_ELEMENTS:
        raise NotApplicable(f"numeric gradients need 2 calls per element; more than {MAX_NUMERIC_ELEMENTS} inputs")
    for x in leaves:
        if not bool(torch.isfinite(x).all()):
            raise NonDifferentiable("an input holds ±inf/NaN: finite differences are undefined there "
                                    "(x + eps is x), so the numeric side cannot judge this input")
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
    noise = NUMERIC_ROUNDING_ULPS * scale * 2.0 ** -52 / (2 * step)
    if not math.isfinite(noise) or noise > GRADCHECK_ATOL:
        # Note [Numeric gradient resolution]: a step of eps moves the objective by eps * grad, which
        # float64 cannot resolve beside terms of this size (a huge element elsewhere in the input);
        # the differences would be rounding noise, so they judge nothing.
        raise NonDifferentiable(f"float64 central differences cannot resolve a step of {step:g} beside "
                                f"output terms of total magnitude {scale:.3g} (noise ~{noise:.3g})")
    grads = []
    for x in leaves:
        grad = torch.zeros_like(x, dtype=torch.float64)
        flat, flat_grad = x.data.view(-1), grad.view(-1)
        for i in range(flat.numel()):
            original = float(flat[i])
            # Note [Actual steps]: x + eps is rounded; divide by the steps float64 really took, so a large
            # element (ulp 7e-9 at 5e7) does not bias the difference by ulp/eps.
            high, low = original + step, original - step
            if high == original or low == original:
                raise NonDifferentiable(f"a step of {step:g} at element {i} (value {original:.3g}) is "
                                        "below float64 resolution: no numeric derivative")
            flat[i] = high
            up = value()
            flat[i] = low
            down = value()
            flat[i] = original
            if not (math.isfinite(up) and math.isfinite(down)):
                # A step of eps leaves the function's domain (a target of kl_div at 1e-308 stepped below
                # zero, log at the edge): the differences say nothing about the analytic gradient here.
                raise NonDifferentiable(f"a step of {step:g} at element {i} leaves the function's "
                                        f"domain (float64 value {up if not math.isfinite(up) else down})")
            forward_diff, backward_diff = (up - centre) / (high - original), (centre - down) / (original - low)
            if strict and abs(forward_diff - backward_diff) > GRADCHECK_ATOL + GRADCHECK_RTOL * abs(backward_diff):
                raise NonDifferentiable(f"one-sided differences disagree at element {i} "
                                        f"({forward_diff:.6g} vs {backward_diff:.6g}): not differentiable here")
            flat_grad[i] = (up - down) / (high - low)
        if not bool(torch.isfinite(grad).all()):
            raise NonDifferentiable("the central differences are not finite: a NaN/Inf numerical gradient is "
                                    "never evidence")
        grads.append(grad)
    return tuple(grads)


def _directions(leaves: list[torch.Tensor]) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(DIRECTION_SEED)
    return [torch.randn(x.shape, generator=gen, dtype=torch.float64) for x in leaves]


def forward_directional(target: Target, sample: Sample, exclude: frozenset[int],
                        shift: float = 0.0) -> float:
    """<v, J(x + shift*u) u> in float64 by forward-mode AD (u: the fixed random direction)."""
    import torch.autograd.forward_ad as fwAD

    fn = bound_callable(target, sample, dtype=torch.float64 if target.is_module_class else None)
    _, leaves = _with_leaves(sample, torch.float64, exclude)
    directions = iter(_directions(leaves))
    position = iter(range(1 << 30))
    with fwAD.dual_level(), torch.no_grad():

        def dual(t: torch.Tensor) -> torch.Tensor:
            here = next(position)
            base = t.detach().to(torch.float64).clone() if t.is_floating_point() else t.detach().clone()
            if not _differentiable(t) or here in exclude:
                return base
            u = next(directions)
            return fwAD.make_dual(base + shift * u, u)

        args, kwargs = map_tensors(sample.tree(), dual)
        out = fn(*args, **kwargs)
        total = 0.0
        for leaf, v in _cotangents(out):
            tangent = fwAD.unpack_dual(leaf).tangent
            if tangent is not None:
                total += float((tangent.double() * v.double()).sum())
    return total


def smoothness(target: Target, sample: Sample, exclude: frozenset[int]) -> tuple[bool | None, float | None, str]:
    """The forward-mode differentiability check: (smooth?, directional derivative at x, words).

    None when forward-mode AD is not available for this target (the check could not run)."""
    try:
        _, leaves = _with_leaves(sample, torch.float64, exclude)
        scale = max((float(x.detach().abs().max()) for x in leaves if x.numel()), default=0.0)
        step = NEIGHBOUR_STEP * (1.0 + scale)
        centre = forward_directional(target, sample, exclude)
        sides = [forward_directional(target, sample, exclude, s) for s in (step, -step)]
    except Exception as exc:  # noqa: BLE001 - many ops have no forward-mode formula
        return None, None, f"forward-mode AD not available ({type(exc).__name__}: {str(exc)[:120]})"
    values = [centre, *sides]
    if not all(math.isfinite(v) for v in values):
        return False, centre, "forward-mode directional derivative is not finite at x or a neighbour"
    allowed = GRADCHECK_ATOL + NEIGHBOUR_RTOL * abs(centre)
    if max(abs(s - centre) for s in sides) > allowed:
        return False, centre, (f"forward-mode directional derivative changes between neighbours at ±{step:.2g} "
                               f"({sides[1]:.6g}, {centre:.6g}, {sides[0]:.6g}): a kink lies nearby")
    return True, centre, f"forward-mode directional derivative {centre:.6g} is the same at neighbours ±{step:.2g}"


@dataclass
class GradientReference:
    """The float64 gradient a gradient mode is judged against, and where it came from."""

    grads: tuple[torch.Tensor, ...]
    basis: str  # "float64 autograd" | "float64 central differences" | "float64 autograd, subgradient filled"
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"basis": self.basis, "detail": self.detail}


def _agree(a: tuple[torch.Tensor, ...], b: tuple[torch.Tensor, ...]) -> bool:
    return len(a) == len(b) and all(
        x.shape == y.shape and bool(torch.isclose(x, y, rtol=GRADCHECK_RTOL, atol=GRADCHECK_ATOL).all())
        for x, y in zip(a, b))


def _dot(grads: tuple[torch.Tensor, ...], directions: list[torch.Tensor]) -> float:
    return float(sum((g.double() * u).sum() for g, u in zip(grads, directions)))


def gradient_reference(target: Target, sample: Sample) -> GradientReference:
    """Note [Gradient fp64 reference]: float64 autograd, overruled by well-conditioned central differences at a
    smooth point only."""
    exclude = index_like_positions(target, sample)
    fn64 = bound_callable(target, sample, dtype=torch.float64 if target.is_module_class else None)
    analytic = reverse_gradients(lambda args, kwargs: fn64(*args, **kwargs), sample, dtype=torch.float64,
                                 exclude=exclude)
    try:
        numeric = numeric_gradients(target, sample, strict=True)
    except NotApplicable as exc:
        return _with_subgradients(target, sample, analytic, f"central differences not defined here: {exc}")
    if _agree(analytic, numeric):
        return GradientReference(analytic, "float64 autograd", "float64 autograd and float64 central differences "
                                                               "agree")
    # Note [Central differences that move with their step]
    try:
        coarse = numeric_gradients(target, sample, strict=False, step=COARSE_STEP_FACTOR * GRADCHECK_EPS)
    except NotApplicable:
        coarse = None
    if coarse is not None and not _agree(numeric, coarse):
        return GradientReference(analytic, "float64 autograd", f"central differences differ from float64 autograd "
                                 f"but move with their step ({GRADCHECK_EPS:g} against "
                                 f"{COARSE_STEP_FACTOR * GRADCHECK_EPS:g}): rounding noise, they cannot arbitrate")
    smooth, directional, words = smoothness(target, sample, exclude)
    if smooth is False:
        return GradientReference(analytic, "float64 autograd", f"central differences differ from float64 autograd "
                                                               f"but cannot arbitrate: {words}")
    detail = f"float64 autograd differs from well-conditioned float64 central differences; {words}"
    if directional is not None:
        _, leaves = _with_leaves(sample, torch.float64, exclude)
        directions = _directions(leaves)
        detail += (f" (directional derivative: forward {directional:.6g}, reverse {_dot(analytic, directions):.6g}, "
                   f"central differences {_dot(numeric, directions):.6g})")
    return GradientReference(numeric, "float64 central differences", detail)


def _with_subgradients(target: Target, sample: Sample, analytic: tuple[torch.Tensor, ...], why: str
                       ) -> GradientReference:
    """Where float64 autograd is NaN/Inf at a finite input, a finite lenient central difference (a subgradient at a
    convex kink) is the reference there; elsewhere float64 autograd."""
    if all(bool(torch.isfinite(g).all()) for g in analytic):
        return GradientReference(analytic, "float64 autograd", why)
    try:
        lenient = numeric_gradients(target, sample, strict=False)
    except NotApplicable:
        return GradientReference(analytic, "float64 autograd", why)
    filled = tuple(torch.where(torch.isfinite(a), a, n) for a, n in zip(analytic, lenient))
    return GradientReference(filled, "float64 autograd, subgradient filled",
                             f"{why}; float64 autograd is NaN/Inf at a finite input where the central difference "
                             "(a subgradient) is finite")


# Note [Gradients on a device]
# "The backward of X gives different gradients on the GPU": the forward is right on both devices and the CUDA
# backward kernel is not, so comparing forward outputs (device:cuda) never sees it, and CPU autograd against
# central differences (grad) passes on the CPU. grad:device:cuda runs the forward on the GPU with the CPU leaves
# moved there by differentiable copies; autograd then runs the GPU's backward kernels and brings the gradients
# back through the copies, and they are compared with the CPU's eager gradients (reference `grad`). Without a GPU
# the inner device mode's check makes every input not applicable, as for device:cuda. A pattern with this test mode
# is a Gradient_Mismatch, as one through torch.compile is (Note [Compiled gradients] in agent/extract/modes.py):
# what is compared is a gradient; the device is where it is computed.
_ON_DEVICE = '''
    if isinstance(fn, torch.nn.Module):
        import copy
        fn = copy.deepcopy(fn).to({device!r})
    def forward(*a, **k):
        a, k = torch.utils._pytree.tree_map_only(torch.Tensor, lambda t: t.to({device!r}), (a, k))
        return torch.utils._pytree.tree_map_only(torch.Tensor, lambda t: t.cpu(), fn(*a, **k))'''


class GradMode(Mode):
    """Analytic reverse-mode gradients, through eager or through another (forward) mode such as compile."""

    inner: Mode | None = None
    reference_basis: dict[str, str] | None = None  # where the last fp64 reference came from

    def check(self, target: Target, sample: Sample) -> None:
        if self.inner is None and target.api == CUSTOM_FUNCTION_API:
            # eager gradients are tested against float64 central differences (grad:numeric): a custom Function's
            # backward is its author's rule, not the derivative (Note [Custom autograd Functions])
            raise NotApplicable(f"{self.name}: a custom Function's backward is its author's rule, not the derivative; "
                                "its gradients are compared through another mode (grad:compile:*)")
        if not any(_differentiable(t) for t in map_tensors_leaves(sample)):
            raise NotApplicable(f"{self.name}: the call has no floating-point input to differentiate")
        if self.inner is not None:
            self.inner.check(target, sample)

    def canonicalize(self, sample: Sample) -> Sample:
        """The input as the forward mode takes it (Note [Empty inputs in compiled code] in modes/compile.py)."""
        return sample if self.inner is None else self.inner.canonicalize(sample)

    def run(self, target: Target, sample: Sample) -> Any:
        exclude = index_like_positions(target, sample)
        if self.inner is None:
            fn = bound_callable(target, sample)
            return reverse_gradients(lambda args, kwargs: fn(*args, **kwargs), sample, exclude=exclude)
        inner = self.inner
        return reverse_gradients(lambda args, kwargs: inner.run(target, sample.with_tree((args, kwargs))), sample,
                                 exclude=exclude)

    def fp64_reference(self, target: Target, sample: Sample) -> Any:
        """Note [Gradient fp64 reference]: float64 autograd, overruled only by well-conditioned central
        differences at a smooth point; `reference_basis` says which and why."""
        reference = gradient_reference(target, sample)
        self.reference_basis = reference.to_dict()
        return reference.grads

    def repro_source(self, target: Target | None = None, sample: Sample | None = None) -> str:
        # the script runs each mode under no_grad (its `run`): gradients are taken with grad mode on again
        forward = "\n        forward = fn"
        if self.inner is not None and self.inner.name.startswith("compile:"):
            forward = f"\n        forward = torch.compile(fn, backend={self.inner.name.split(':', 1)[1]!r})"
        elif self.inner is not None:  # device:<name>: the forward there, its outputs back on the CPU
            forward = "\n    ".join(_ON_DEVICE.format(device=self.inner.name.split(":", 1)[1]).split("\n"))
        return f'''
def run_mode(fn, args, kwargs):
    import torch._inductor.config
    torch._inductor.config.fallback_random = True
    with torch.enable_grad():{forward}
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
        exclude = index_like_positions(target, sample)
        dtypes = [t.dtype for i, t in enumerate(map_tensors_leaves(sample)) if _differentiable(t) and i not in exclude]
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
    """`grad`, `grad:eager`, `grad:numeric`, `grad:<forward mode>` (grad:compile:inductor, grad:device:cuda)."""
    if name in ("grad", "grad:eager"):
        return GradMode(name=name, options=options)
    if name == "grad:numeric":
        return NumericGradMode(name=name, options=options)
    inner_name = name.split(":", 1)[1] if ":" in name else ""
    mode = GradMode(name=name, options=options)
    if inner_name.startswith("compile:"):
        from fuzz_core.modes.compile import make_compile

        mode.inner = make_compile(inner_name, options)
    elif inner_name.startswith("device:"):
        from fuzz_core.modes.device import make_device

        mode.inner = make_device(inner_name, options)
    else:
        raise KeyError(name)
    mode.dispatch_observable = mode.inner.dispatch_observable
    return mode
