"""Input sources, triggers and mutators: what they produce, and that mutation is replayable from a recipe."""

from __future__ import annotations

import math

import pytest
import torch

from fuzz_core.campaign import Campaign
from fuzz_core.inputs import Sample
from fuzz_core.inputs.triggers import apply_trigger, value_for_condition
from fuzz_core.modes.layout import noncontiguous_copy
from fuzz_core.mutators import DEFAULT_MUTATORS, UniformSelector
from fuzz_core.mutators.values import special_value
from fuzz_core.spec import HarnessSpec
from tests.fuzz_core.spies import evaluated_samples


def test_special_values_per_dtype() -> None:
    assert math.isnan(special_value("nan", torch.float16))
    assert special_value("denormal", torch.float32) < torch.finfo(torch.float32).smallest_normal
    assert str(special_value("-0.0", torch.float32)) == "-0.0"


def test_condition_strings_pick_satisfying_values() -> None:
    assert value_for_condition("> 0") == 1
    assert value_for_condition(">= 2") == 2
    assert value_for_condition("< 0.5") == 0.0
    assert value_for_condition(3) == 3


def test_triggers_rewrite_seed_inputs() -> None:
    seed = Sample(args=(torch.randn(2, 3, 4, 4),), kwargs={})
    out = apply_trigger([seed], {"special_values": ["nan", "inf"], "layout": "channels_last",
                                 "params": {"padding": "> 0"}}, seed=0)
    assert len(out) == 2
    assert bool(out[0].args[0].isnan().any()) and bool(out[1].args[0].isinf().any())
    assert all(s.args[0].is_contiguous(memory_format=torch.channels_last) for s in out)
    assert all(s.kwargs["padding"] == 1 for s in out)
    empty = apply_trigger([seed], {"shape": ["zero_size"]}, seed=0)
    assert empty[0].args[0].numel() == 0


def test_noncontiguous_copy_keeps_values() -> None:
    x = torch.randn(3, 5)
    y = noncontiguous_copy(x)
    assert not y.is_contiguous() and torch.equal(x, y)


def test_a_quantized_tensor_gets_a_strided_copy_with_its_values_and_qparams() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized tensor creation is deprecated in this torch
        q = torch.quantize_per_tensor(torch.linspace(-1, 1, 24).reshape(2, 3, 4), 0.05, 8, torch.quint8)
    copy = noncontiguous_copy(q)
    assert copy.is_quantized and not copy.is_contiguous() and copy.shape == q.shape
    assert (copy.q_scale(), copy.q_zero_point()) == (q.q_scale(), q.q_zero_point())
    assert torch.equal(copy.int_repr(), q.int_repr())


def test_mutators_are_deterministic_given_their_generator() -> None:
    sample = Sample(args=(torch.randn(4, 4), torch.randn(4, 4)), kwargs={"alpha": 2})
    for mutator in DEFAULT_MUTATORS:
        a = mutator.mutate(sample, torch.Generator().manual_seed(5))
        b = mutator.mutate(sample, torch.Generator().manual_seed(5))
        assert a is not None and b is not None
        for x, y in zip(a.args, b.args):
            assert torch.equal(x, y) or (x.isnan() == y.isnan()).all()
        assert a.kwargs == {"alpha": 2}


def test_campaign_replays_a_recorded_recipe_exactly() -> None:
    recorded: list[dict] = []
    spec = HarnessSpec(api="torch.add", test_mode="variant:method", seed=3)
    campaign = Campaign(spec, selector=UniformSelector(), progress=recorded.append)
    campaign.prepare()
    seen = evaluated_samples(campaign)
    campaign.run(budget_s=None, max_executions=25)
    assert len(recorded) == len(seen) == 25
    fresh = Campaign(spec)
    fresh.prepare()
    for recipe, sample in list(zip(recorded, seen))[-5:]:
        replayed = fresh.replay(recipe)
        for x, y in zip(replayed.args, sample.args):
            if isinstance(x, torch.Tensor):
                assert torch.equal(x.isnan(), y.isnan()) and torch.equal(x.nan_to_num(), y.nan_to_num())


def test_signature_source_builds_module_inputs() -> None:
    campaign = Campaign(HarnessSpec(api="torch.nn.Conv2d", input_source="signature", test_mode="eager"))
    campaign.prepare()
    assert campaign.source == "signature"
    assert campaign.seeds[0].ctor == {"in_channels": 4, "out_channels": 4, "kernel_size": 3}


class _GrowingSelector:
    """Adds every passing input to the corpus and always picks the newest entry (a stand-in for guidance)."""

    def __init__(self) -> None:
        self.observed: list[tuple[str, object]] = []
        self.samples: list = []

    def select(self, corpus, gen):  # type: ignore[no-untyped-def]
        return len(corpus) - 1

    def observe(self, entry, outcome, outputs):  # type: ignore[no-untyped-def]
        self.observed.append((outcome, outputs))
        self.samples.append(entry.sample)
        return outcome == "pass"


def test_corpus_selector_seam_grows_the_corpus_and_stays_replayable() -> None:
    from fuzz_core import run_harness

    selector = _GrowingSelector()
    recorded: list[dict] = []
    spec = HarnessSpec(api="torch.sigmoid", test_mode="layout:noncontiguous", seed=2)
    result = run_harness(spec, max_executions=15, selector=selector, progress=recorded.append)
    assert result.verdict == "passed"
    assert len(selector.observed) == 15
    # A passing input ran both modes, so both outputs reach the selector (a not-applicable one has no test output).
    ref_out, test_out = [outputs for outcome, outputs in selector.observed if outcome == "pass"][-1]  # type: ignore[misc]
    assert isinstance(ref_out, torch.Tensor) and isinstance(test_out, torch.Tensor)
    # Always mutating the newest entry builds chains of mutations; the recipe still rebuilds the input.
    assert max(len(r["steps"]) for r in recorded) >= 3
    fresh = Campaign(spec)
    fresh.prepare()
    replayed, executed = fresh.replay(recorded[-1]).args[0], selector.samples[-1].args[0]
    assert replayed.shape == executed.shape
    assert torch.equal(replayed.nan_to_num(), executed.nan_to_num())


def test_trigger_mutators_make_the_shapes_and_layouts_they_name() -> None:
    from fuzz_core.mutators.triggers import Broadcast, MemoryFormat, OverlappingView, ZeroSizeDim

    x = torch.randn(2, 3, 4, 5)
    sample = Sample(args=(x, torch.randn(2, 3, 4, 5)), kwargs={})
    gen = lambda: torch.Generator().manual_seed(1)  # noqa: E731
    empty = ZeroSizeDim().mutate(sample, gen())
    assert empty is not None and all(0 in t.shape for t in empty.args)
    overlapping = OverlappingView().mutate(sample, gen())
    assert overlapping is not None and 0 in overlapping.args[0].stride() and overlapping.args[1] is sample.args[1]
    channels_last = MemoryFormat().mutate(sample, gen())
    assert channels_last is not None and channels_last.args[0].is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(channels_last.args[0], x)
    broadcast = Broadcast().mutate(sample, gen())
    assert broadcast is not None and broadcast.args[0].shape == x.shape and 1 in broadcast.args[1].shape


def test_special_values_include_the_square_overflow_and_2_24_edges() -> None:
    from fuzz_core.mutators.values import special_value

    edge = special_value("square_overflow", torch.float32)
    assert 1e19 <= edge and torch.isinf(torch.tensor(edge) * torch.tensor(edge))
    assert special_value("beyond_2_24", torch.float32) > 2**24
    assert special_value("beyond_2_24", torch.float16) <= torch.finfo(torch.float16).max


@pytest.mark.parametrize("trigger", [{"shape": ["scalar"]}, {"layout": "noncontiguous"}, {"layout": "channels_last"}])
def test_a_shape_or_layout_trigger_leaves_a_sparse_input_as_it_is(trigger: dict) -> None:
    # sspaddmm and sampled_addmm take sparse inputs: reshaping or restriding them fails in torch and said
    # "harness setup failed" on the real-report run; the trigger applies to the strided inputs only
    sparse = torch.eye(3).to_sparse()
    csr = torch.eye(3).to_sparse_csr()
    dense = torch.arange(9.0).reshape(3, 3)
    [out] = apply_trigger([Sample((sparse, dense, csr), {}, origin="t")], trigger, seed=0)
    assert out.args[0] is sparse and out.args[2] is csr
    if trigger.get("layout") == "noncontiguous":
        assert not out.args[1].is_contiguous() and torch.equal(out.args[1], dense)


def test_a_large_offset_moves_every_element_by_one_value_and_keeps_the_layout() -> None:
    from fuzz_core.mutators import LargeOffset

    x = torch.randn(6, 4).t()  # strided: a value mutation must keep the layout a compiled mode was built for
    offsets = set()
    for seed in range(12):
        out = LargeOffset().mutate(Sample((x,)), torch.Generator().manual_seed(seed))
        assert out is not None
        shifted = out.args[0]
        assert (shifted.shape, shifted.dtype, shifted.stride()) == (x.shape, x.dtype, x.stride())
        moved = (shifted.double() - x.double()).flatten()
        offsets.add(float(moved[0]))
        assert float(moved.abs().max()) >= 2**24  # every element, the same large shift (up to float32 rounding)
    assert len(offsets) >= 3  # both magnitudes and both signs are drawn


def test_a_large_offset_is_replayable_from_its_generator() -> None:
    from fuzz_core.mutators import LargeOffset

    x = torch.randn(5)
    first = LargeOffset().mutate(Sample((x,)), torch.Generator().manual_seed(3))
    again = LargeOffset().mutate(Sample((x,)), torch.Generator().manual_seed(3))
    assert first is not None and again is not None
    assert torch.equal(first.args[0], again.args[0]) and first.origin == again.origin
