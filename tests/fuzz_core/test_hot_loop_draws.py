"""The hot loop's cheaper draws and checks give what the plain torch calls they replace gave (Note [The hot loop],
Note [Mutation cost]): each seed's stream of inputs is unchanged."""

from __future__ import annotations

import math

import pytest
import torch

from fuzz_core.campaign import Campaign, _has_nonfinite
from fuzz_core.cgf.selector import CoverageSelector
from fuzz_core.inputs import Sample
from fuzz_core.mutators.base import DrawStream, randbelow
from fuzz_core.mutators.builtin import (DtypeBoundary, GaussianNoise, LargeOffset, SmallShapeChange,
                                        SpecialValues, _positions)
from fuzz_core.mutators.values import boundary_values, special_value
from fuzz_core.spec import HarnessSpec
from fuzz_core.tensors import structure_key, structure_sig


def test_randbelow_is_randint_draw_for_draw() -> None:
    a, b = torch.Generator().manual_seed(11), torch.Generator().manual_seed(11)
    for n in (1, 2, 3, 9, 64, 1000, 2**40):
        for _ in range(50):
            assert randbelow(n, a) == int(torch.randint(0, n, (1,), generator=b))
    assert torch.equal(torch.rand(4, generator=a), torch.rand(4, generator=b))  # same state after


def test_the_mutator_draw_follows_the_weights_from_buffered_draws() -> None:
    """The campaign's DrawStream draws a mutator by its weight, never one of weight 0, the same run to run; any other
    generator gets torch.multinomial's draw, and weights multinomial rejects still raise."""
    spec = HarnessSpec(api="torch.sigmoid", input_source="described",
                       inputs={"args": [{"kind": "tensor", "tensor": {"shape": [2]}}]}, seed=1)
    campaign = Campaign(spec)
    for weights in (campaign._mutator_weights, campaign._value_weights):
        stream = DrawStream(3)
        drawn = [campaign._draw_mutator(weights, stream) for _ in range(20000)]
        again = DrawStream(3)
        assert drawn == [campaign._draw_mutator(weights, again) for _ in range(20000)]
        share = weights / weights.sum()
        for i, p in enumerate(share.tolist()):
            count = drawn.count(i)
            if p == 0:
                assert count == 0
            else:  # within five standard deviations of the expected count (the seed is fixed: no flakiness)
                assert abs(count - 20000 * p) <= 5 * math.sqrt(20000 * p * (1 - p)) + 1, (i, count, p)
        plain, twin = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
        assert [campaign._draw_mutator(weights, plain) for _ in range(50)] == [
            int(torch.multinomial(weights, 1, generator=twin)) for _ in range(50)]
    assert set(drawn) == set(campaign._value_mutators)
    for bad in (torch.zeros(9), torch.tensor([1.0, -1.0, 2.0]), torch.tensor([1.0, float("nan")])):
        with pytest.raises(RuntimeError):
            campaign._draw_mutator(bad, DrawStream(3))


def test_draw_stream_is_a_generator_with_uniform_draws() -> None:
    a, b = DrawStream(9), DrawStream(9)
    draws = [a.uniform() for _ in range(600)]  # past two blocks
    assert draws == [b.uniform() for _ in range(600)] and all(0.0 <= u < 1.0 for u in draws)
    assert len(set(draws)) == 600
    assert torch.equal(torch.rand(3, generator=a), torch.rand(3, generator=b))  # still an ordinary generator
    assert {a.below(3) for _ in range(300)} == {0, 1, 2} and a.below(1) == 0


def test_coverage_selection_from_a_draw_stream() -> None:
    """Uniform among the newest five entries plus one drawn from anywhere, as with a plain generator."""
    selector = CoverageSelector(recent=5)
    for n in (1, 3, 5, 6, 40):
        corpus = list(range(n))
        a, b = DrawStream(n), DrawStream(n)
        picks = [selector.select(corpus, a) for _ in range(3000)]
        for got in picks[:200]:
            newest = min(5, n)
            pick = b.below(newest + 1)
            assert got == (n - newest + pick if pick < newest else b.below(n))
        assert set(picks) == set(range(n))
        if n == 40:  # each of the newest five about 1/6 of the picks, each older entry about 1/240
            assert all(400 <= picks.count(i) <= 600 for i in range(35, 40))
            assert all(picks.count(i) <= 40 for i in range(35))


def test_coverage_selection_draws_as_the_pool_list_did() -> None:
    selector = CoverageSelector(recent=5)
    for n in (1, 3, 5, 6, 40):
        corpus = list(range(n))
        a, b = torch.Generator().manual_seed(n), torch.Generator().manual_seed(n)
        for _ in range(200):
            pool = list(range(max(0, n - 5), n))
            pool.append(int(torch.randint(0, n, (1,), generator=b)))
            assert selector.select(corpus, a) == pool[int(torch.randint(0, len(pool), (1,), generator=b))]


def _old_gaussian(t: torch.Tensor, g: torch.Generator, scale: float = 0.1) -> torch.Tensor:
    spread = float(t.float().abs().mean()) if t.numel() else 1.0
    spread = spread if spread > 0 and spread == spread and spread != float("inf") else 1.0
    noise = torch.randn(t.shape, generator=g) * (scale * spread)
    return (t.double() + noise.double()).to(t.dtype)


def _same(x: torch.Tensor, y: torch.Tensor) -> bool:
    return x.dtype == y.dtype and x.shape == y.shape and x.stride() == y.stride() and bool(
        ((x == y) | (x.isnan() & y.isnan())).all())


def test_gaussian_noise_gives_the_float64_round_trips_values() -> None:
    base = torch.randn(6, 7, generator=torch.Generator().manual_seed(0)) * torch.logspace(-40, 37, 7)
    base[0, 0], base[1, 1], base[2, 2] = float("inf"), float("nan"), 3e38
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        for t in (base.to(dtype), base.to(dtype).t(), base.to(dtype)[:, ::2], base.to(dtype)[:1].expand(6, 7),
                  base.to(dtype)[:, :1].expand(6, 7).t()):
            for seed in range(20):
                new = GaussianNoise().mutate(Sample(args=(t,)), torch.Generator().manual_seed(seed))
                g = torch.Generator().manual_seed(seed)
                randbelow(1, g)  # the leaf choice
                assert new is not None and _same(new.args[0], _old_gaussian(t, g))


def test_special_and_boundary_values_land_where_the_indexed_assignment_put_them() -> None:
    for dtype in (torch.float32, torch.float16, torch.float64):
        t = torch.randn(5, 5).to(dtype)
        for seed in range(30):
            mutator = SpecialValues()
            new = mutator.mutate(Sample(args=(t,)), torch.Generator().manual_seed(seed))
            g = torch.Generator().manual_seed(seed)
            name = mutator.values[int(torch.randint(0, len(mutator.values), (1,), generator=g))]
            int(torch.randint(0, 1, (1,), generator=g))
            old = t.contiguous().clone()
            old.view(-1)[_positions(old, g)] = special_value(name, dtype)
            assert new is not None and _same(new.args[0], old)
            new = DtypeBoundary().mutate(Sample(args=(t,)), torch.Generator().manual_seed(seed))
            g = torch.Generator().manual_seed(seed)
            int(torch.randint(0, 1, (1,), generator=g))
            old = t.contiguous().clone()
            values = boundary_values(dtype)
            old.view(-1)[_positions(old, g)] = values[int(torch.randint(0, len(values), (1,), generator=g))]
            assert new is not None and _same(new.args[0], old)


def test_nonfinite_count_by_sum_agrees_with_isfinite() -> None:
    big = torch.full((4,), 3e38)  # finite elements whose sum overflows
    cases = [torch.zeros(3), big, torch.tensor([1.0, float("inf")]), torch.tensor([float("-inf"), float("inf")]),
             torch.tensor([0.0, float("nan")]), torch.empty(0), torch.full((3,), 60000.0, dtype=torch.float16),
             torch.tensor([1.0, float("nan")], dtype=torch.bfloat16), torch.tensor([1 + 1j, complex("inf")]),
             torch.arange(3), (torch.zeros(2), torch.tensor([float("nan")])), [big, big]]
    # the numpy path (small float32/float64) and the sum path (larger, or requiring grad) on the same kinds of values
    for n in (64, 5000):
        for dtype in (torch.float32, torch.float64):
            finite = torch.randn(n, generator=torch.Generator().manual_seed(n)).to(dtype)
            huge = torch.full((n,), torch.finfo(dtype).max / 2, dtype=dtype)
            cases += [finite, huge, finite.reshape(-1, 2).t(), finite.clone().requires_grad_()]
            for value in (float("nan"), float("inf"), float("-inf")):
                special = finite.clone()
                special[n // 3] = value
                cases += [special, special.reshape(-1, 2).t(), special.clone().requires_grad_()]
    for out in cases:
        leaves = list(out) if isinstance(out, (tuple, list)) else [out]
        expected = any((t.is_floating_point() or t.is_complex()) and not bool(torch.isfinite(t.detach()).all())
                       for t in leaves)
        assert _has_nonfinite(out) == expected, out
    assert math.isinf(big.sum().item()) and not _has_nonfinite(big)


def test_structure_sig_tells_apart_exactly_what_structure_key_does() -> None:
    x, y = torch.zeros(2, 3), torch.zeros(3, 2)
    trees = [((x,), {}), ((y,), {}), ((x.double(),), {}), ((x, 1), {}), ((x, 1.0), {}), ((x, True), {}),
             (([x],), {}), (((x,),), {}), ((x,), {"dim": 1}), ((x,), {"dim": 2}), ((x, None), {}),
             ((x, torch.float16), {}), ((torch.nn.Parameter(x),), {}), ((x, [1, 2]), {}), ((x, (1, 2)), {})]
    for a in trees:
        for b in trees:
            same_key = structure_key(a, with_shapes=True) == structure_key(b, with_shapes=True)
            assert (structure_sig(a) == structure_sig(b)) == same_key, (a, b)
            assert hash(structure_sig(a)) == hash(structure_sig(a))


def test_positions_are_randperms_first_positions() -> None:
    """The partial shuffle (and its one-call draws) picks what randperm(n)[:count] picked, count drawn first."""
    for n in (1, 2, 3, 4, 64, 65, 66, 100, 1000, 4096, 10**6 + 3):
        t = torch.empty(n)
        for seed in range(40):
            g = torch.Generator().manual_seed(seed)
            got = _positions(t, g)
            g = torch.Generator().manual_seed(seed)
            count = int(torch.randint(0, 3, (1,), generator=g)) + 1
            assert got.dtype == torch.int64 and got.tolist() == torch.randperm(n, generator=g)[:count].tolist()


def test_identical_outputs_is_the_elementwise_nan_aware_check() -> None:
    from fuzz_core.campaign import identical_outputs

    nan_bits = torch.tensor([0x7FC00000, 0x7FC00001, -0x00400000], dtype=torch.int32).view(torch.float32)
    base = torch.tensor([1.0, float("nan"), -0.0, float("inf")])
    cases = [(base, base.clone()), (base, torch.tensor([1.0, float("nan"), 0.0, float("inf")])),
             (base, torch.tensor([1.0, 2.0, -0.0, float("inf")])), (nan_bits, nan_bits.flip(0)),
             (nan_bits, torch.zeros(3)), (base.double(), base.double().clone()), (base.half(), base.half()),
             (base, base.double()), (base[::2], base.clone()[::2]), (base.bfloat16(), base.bfloat16().neg()),
             (base, torch.tensor([1.0, 2.0, -0.0, 3.0])), (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])),
             (torch.tensor([float("nan"), 2.0]), torch.tensor([1.0, 2.0])),
             (torch.tensor([-0.0, 2.0]), torch.tensor([0.0, 2.0])),
             (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5]))]
    for ref, test in cases:
        expected = ref.dtype == test.dtype and ref.shape == test.shape and bool(
            ((ref == test) | (ref.isnan() & test.isnan())).all())
        assert identical_outputs(ref, test) == expected, (ref, test)
        if not _has_nonfinite(test):  # what _judge passes when the test output is finite: the same answer
            assert identical_outputs(ref, test, test_finite=True) == expected, (ref, test)


def test_encoded_progress_records_are_json_dumps_of_the_recipe() -> None:
    """The worker's hot-loop record (RunProgress.encoded, steps encoded once per corpus entry) is, byte for byte,
    the record json.dumps makes of {"task", "phase", **recipe}."""
    import json

    from fuzz_core.worker_main import RunProgress

    class Collect:
        def __init__(self) -> None:
            self.records: list[bytes] = []

        def write(self, record: dict) -> None:
            self.write_bytes(json.dumps(record, separators=(",", ":")).encode())

        def write_bytes(self, data: bytes) -> None:
            self.records.append(data)

    spec = HarnessSpec(api="torch.add", input_source="described", seed=5,
                       inputs={"args": [{"kind": "tensor", "tensor": {"shape": [3, 4]}}] * 2})
    plain, fast = Collect(), Collect()
    for sink, progress in ((plain, RunProgress(plain, "t-1")), (fast, RunProgress(fast, "t-1"))):
        if sink is plain:
            progress = progress.__call__  # a plain callable: the dict path
        campaign = Campaign(spec, selector=CoverageSelector(), progress=progress)
        campaign.prepare()
        campaign.run(budget_s=None, max_executions=300)
    assert len(plain.records) == 300 and plain.records == fast.records
    assert any(len(json.loads(r)["steps"]) > 1 for r in fast.records)  # corpus entries' children too


def test_randbelow_pair_is_two_randint_draws() -> None:
    from fuzz_core.mutators.base import ONE_DRAW_RANGE, randbelow_pair

    for n, m in ((1, 1), (1, 2), (5, 6), (7, 3), (100, 6), (2**13, 2**13 - 1), (ONE_DRAW_RANGE // 2, 2),
                 (ONE_DRAW_RANGE - 1, 1)):
        a, b = torch.Generator().manual_seed(n), torch.Generator().manual_seed(n)
        for _ in range(50):
            pair = randbelow_pair(n, m, a)
            assert pair == (int(torch.randint(0, n, (1,), generator=b)), int(torch.randint(0, m, (1,), generator=b)))
        assert torch.equal(torch.rand(4, generator=a), torch.rand(4, generator=b))  # same state after
    assert randbelow_pair(2**14 + 1, 2**14, torch.Generator()) is None  # the common multiple is too large


def test_value_mutators_draw_at_once_what_they_drew_one_by_one() -> None:
    """Plain tensor arguments take the one-call draws (Note [Mutation cost]); with a keyword argument the same
    mutators take the draws one by one: the same values land in the same places."""
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        for shapes in ([(8, 8)], [(8, 8), (8, 8)], [(1,)], [(2,)], [(3,)], [(100, 70)], [(3, 3), (9,)], [(3,), (4,)]):
            args = tuple(torch.randn(*shape).to(dtype) for shape in shapes)
            for mutator in (SpecialValues(), DtypeBoundary(), GaussianNoise(), LargeOffset()):
                for seed in range(25):
                    fast = mutator.mutate(Sample(args), torch.Generator().manual_seed(seed))
                    slow = mutator.mutate(Sample(args, {"k": 1}), torch.Generator().manual_seed(seed))
                    assert fast is not None and slow is not None and fast.origin == slow.origin
                    assert all(_same(a, b) for a, b in zip(fast.args, slow.args))


def test_shape_change_draws_its_dimension_and_direction_as_two_randint_draws() -> None:
    for shape in ((8, 8), (1, 5), (3,), (2, 1, 4), (7, 1)):
        t = torch.randn(*shape)
        for seed in range(30):
            new = SmallShapeChange().mutate(Sample((t, t.clone())), torch.Generator().manual_seed(seed))
            g = torch.Generator().manual_seed(seed)
            dim = int(torch.randint(0, len(shape), (1,), generator=g))
            grow = bool(int(torch.randint(0, 2, (1,), generator=g))) or shape[dim] <= 1
            expected = list(shape)
            expected[dim] += 1 if grow else -1
            assert new is not None and all(list(a.shape) == expected for a in new.args)
            kept = min(shape[dim], expected[dim])
            assert torch.equal(new.args[0].narrow(dim, 0, kept), t.narrow(dim, 0, kept))


def test_noncontiguous_copy_is_every_other_element_of_a_buffer_of_sevens() -> None:
    from fuzz_core.modes.layout import noncontiguous_copy

    for t in (torch.randn(8, 8), torch.randn(3, 4, 5).to(torch.float16), torch.randint(0, 5, (4, 6)), torch.randn(7),
              torch.randn(8, 8).t(), torch.rand(3, 4) > 0.5, torch.randn(2, 3)[:, :1].expand(2, 3)):
        buffer = torch.empty(*t.shape[:-1], t.shape[-1] * 2, dtype=t.dtype)
        expected = buffer[..., ::2]
        expected.copy_(t)
        buffer[..., 1::2].fill_(7)
        got = noncontiguous_copy(t)
        assert got.shape == t.shape and got.stride() == expected.stride() and got.storage_offset() == 0
        assert torch.equal(got, t) and torch.equal(got._base, buffer) and not got.is_contiguous()


def test_quick_pass_gives_the_full_comparisons_verdict_and_closeness() -> None:
    """compare_tensors' quick pass (oracles/compare._quick_pass) answers only where the full path passes, with the
    closeness the full path finds; everything else goes to the full path."""
    from fuzz_core.oracles import compare as C

    g = torch.Generator().manual_seed(0)
    cases = []
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        base = torch.randn(6, 5, generator=g).to(dtype)
        rtol, atol = C.tolerance_for(dtype)
        for scale in (0.0, 0.1, 0.5, 0.99, 1.0, 1.01, 3.0):
            noise = (torch.rand(6, 5, generator=g).double() * 2 - 1) * scale
            near = (base.double() + noise * (atol + rtol * base.double().abs())).to(dtype)
            cases.append((base, near))
            for value in (float("nan"), float("inf"), float("-inf")):  # the same special value in both, or not
                a, b = base.clone(), near.clone()
                a[1, 2] = b[1, 2] = value
                cases += [(a, b), (a, near), (near, a)]
                b[4, 4] = value
                cases.append((a, b))
        big = torch.tensor([1.7e308, 0.0], dtype=torch.float64)
        cases.append((big, -big))  # finite elements whose difference overflows
        special = base.clone()
        special[0, 0], special[1, 1], special[2, 2] = float("nan"), float("inf"), -0.0
        cases += [(special, special.clone()), (special, base), (base, special), (torch.zeros(3, dtype=dtype),
                  torch.full((3,), atol, dtype=dtype)), (base, base.t().contiguous().t())]
    quick = C._quick_pass
    for ref, test in cases:
        results = []
        for fast in (True, False):
            C._quick_pass = quick if fast else (lambda *a: False)
            try:
                closeness = [0.25]
                mismatch = C.compare_tensors(ref, test, "out", low_dtype=None, compares_dtype=True, closeness=closeness)
            finally:
                C._quick_pass = quick
            results.append((None if mismatch is None else mismatch.detail, closeness[0]))
        assert results[0] == results[1], (ref, test)
    answered = [quick(a, b, *C.tolerance_for(a.dtype), None) for a, b in cases if not torch.equal(a, b)]
    assert any(answered) and not all(answered)  # both paths were taken


def test_structure_dims_sig_tells_apart_exactly_what_structure_key_without_shapes_does() -> None:
    from fuzz_core.tensors import structure_dims_sig

    x, y = torch.zeros(2, 3), torch.zeros(3, 2)
    trees = [((x,), {}), ((y,), {}), ((torch.zeros(4),), {}), ((x.double(),), {}), ((x, 1), {}), ((x, 1.0), {}),
             ((x, True), {}), (([x],), {}), (((x,),), {}), ((x,), {"dim": 1}), ((x,), {"dim": 2}), ((x, None), {}),
             ((x, torch.float16), {}), ((torch.nn.Parameter(x),), {}), ((x, [1, 2]), {}), ((x, (1, 2)), {})]
    for a in trees:
        for b in trees:
            same_key = structure_key(a, with_shapes=False) == structure_key(b, with_shapes=False)
            assert (structure_dims_sig(a) == structure_dims_sig(b)) == same_key, (a, b)


def test_compiled_entries_is_the_filtered_corpus_as_it_grows() -> None:
    from fuzz_core.campaign import _shape_sig
    from fuzz_core.mutators.base import CorpusEntry

    spec = HarnessSpec(api="torch.sigmoid", input_source="described",
                       inputs={"args": [{"kind": "tensor", "tensor": {"shape": [2]}}]}, seed=1)
    campaign = Campaign(spec)
    corpus = [CorpusEntry(Sample((torch.zeros(n % 3 + 1),)), (0, ())) for n in range(5)]
    for step in range(12):
        if step % 3 == 0:
            campaign.compiled_shapes.add(_shape_sig(corpus[step % len(corpus)]))
        if step % 2:
            corpus.append(CorpusEntry(Sample((torch.zeros(step % 4 + 1),)), (0, ())))
        expected = [e for e in corpus if _shape_sig(e) in campaign.compiled_shapes]
        assert campaign._compiled_entries(corpus) == expected
    other = corpus[:2]
    assert campaign._compiled_entries(other) == [e for e in other if _shape_sig(e) in campaign.compiled_shapes]


def test_the_compiled_modes_plain_key_is_structure_dims_sig() -> None:
    from fuzz_core.modes.compile import plain_dims_sig
    from fuzz_core.tensors import structure_dims_sig

    for args in ((torch.ones(2),), (torch.ones(2, 3), torch.ones(2, dtype=torch.float64)), (torch.tensor(1.0),),
                 (torch.ones(0, 4, dtype=torch.float16), torch.ones(1, 1, 1))):
        assert plain_dims_sig(args) == structure_dims_sig((args, {}))
        assert hash(plain_dims_sig(args)) == hash(structure_dims_sig((args, {})))
