"""Empty inputs reach compiled code laid out contiguously (Note [Empty inputs in compiled code])."""

from __future__ import annotations

import pytest
import torch

from fuzz_core.inputs import Sample
from fuzz_core.modes import get_mode
from fuzz_core.target import build_target


def _empty_views() -> list[torch.Tensor]:
    """Three (8, 0) tensors that differ only in their strides, as the mutators' slices leave them."""
    base = torch.randn(8, 8)
    return [base[:, :0], base.t()[:, :0], torch.randn(8, 16)[:, ::2][:, :0]]


def test_an_empty_input_is_handed_over_contiguous_with_its_shape_dtype_and_grad_flag() -> None:
    leaf = torch.randn(8, 8, dtype=torch.float64).t()[:, :0].detach().requires_grad_(True)
    assert leaf.stride() != torch.empty(8, 0).stride()
    out = get_mode("compile:inductor").canonicalize(Sample(args=(leaf, torch.ones(3))))
    empty, full = out.args
    assert empty.shape == (8, 0) and empty.dtype == torch.float64 and empty.requires_grad
    assert empty.stride() == torch.empty(8, 0).stride()
    assert full.stride() == (1,) and torch.equal(full, torch.ones(3))


def test_an_input_with_elements_is_left_as_it_is() -> None:
    sample = Sample(args=(torch.randn(8, 8).t(),), kwargs={"alpha": 2})
    assert get_mode("compile:inductor").canonicalize(sample) is sample
    plain = Sample(args=(torch.randn(8, 8).t(), torch.randn(8)))
    assert get_mode("compile:inductor").canonicalize(plain) is plain


def test_empty_tensors_inside_keyword_arguments_are_made_contiguous_too() -> None:
    sample = Sample(args=(torch.randn(8, 8),), kwargs={"other": torch.randn(8, 8).t()[:, :0]})
    out = get_mode("compile:inductor").canonicalize(sample)
    assert out.kwargs["other"].stride() == torch.empty(8, 0).stride()
    assert out.args[0] is sample.args[0]


def test_a_gradient_through_compiled_code_takes_the_input_as_its_forward_mode_does() -> None:
    sample = Sample(args=(torch.randn(8, 8).t()[:, :0],))
    out = get_mode("grad:compile:inductor").canonicalize(sample)
    assert out.args[0].stride() == torch.empty(8, 0).stride()
    assert get_mode("grad").canonicalize(sample) is sample


@pytest.mark.compile
def test_empty_inputs_that_differ_only_in_strides_compile_once() -> None:
    mode, target = get_mode("compile:eager"), build_target("torch.sigmoid")
    views = _empty_views()
    assert len({v.stride() for v in views}) == 3
    for view in views:
        out = mode.run(target, mode.canonicalize(Sample(args=(view,))))
        assert out.shape == (8, 0)
    assert mode.compiles == 1
    # what the canonical form saves: the same views as they come compile once per stride pattern
    raw = get_mode("compile:eager")
    for view in views:
        raw.run(target, Sample(args=(view,)))
    assert raw.compiles == 3
