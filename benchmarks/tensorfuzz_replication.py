"""Replicate TensorFuzz's two headline results on scikit-learn's digits, CGF vs random search.

1. NaN: a small classifier trained with a numerically unsafe cross-entropy (softmax without
   the max shift, then log) is fuzzed from 10 different seed images; each run is coverage-guided
   (TensorFuzz's NaN set-up: sum-of-|logits| coverage, recency-biased sampling, gaussian
   mutations in [-1, 1]) or random search (the same mutations, always of the seed) with the same
   mutation budget. Reported: runs that found a non-finite loss, and mutations to the first.
2. fp16: the fp32 classifier against its fp16 copy; for each seed image, search an L∞ ball
   around it (clipped mutations) for an input whose predicted class differs; reported is the
   fraction of seeds with a confirmed disagreement, CGF vs random.
3. Instrumentation overhead: executions per second at each --instrument level vs plain.

TensorFuzz reported NaNs in 10/10 CGF runs vs 0/10 random, and fp32/fp16 disagreements for
about 70 % of seed images. The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz_core.cgf import (  # noqa: E402
    CgfConfig,
    DisagreementObjective,
    InputDomain,
    ModelTarget,
    NanObjective,
    run_cgf,
    run_random,
)
from fuzz_core.instrument import LEVELS, run_instrumented  # noqa: E402


def load_digits_tensors() -> tuple[torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits

    digits = load_digits()  # bundled with scikit-learn: no download
    x = torch.tensor(digits.data, dtype=torch.float32) / 8.0 - 1.0  # pixels 0..16 → [-1, 1]
    return x, torch.tensor(digits.target)


def unsafe_cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy the naive way: exp overflows above 88.7 and log(0) appears once the
    logit spread passes ~104 (float32), giving Inf, or NaN through 0 · log 0."""
    e = torch.exp(logits)
    p = e / e.sum(dim=1, keepdim=True)
    return -(nn.functional.one_hot(labels, 10) * torch.log(p)).sum(dim=1)


def train_classifier(x: torch.Tensor, y: torch.Tensor, *, hidden: int, steps: int, init_scale: float,
                     seed: int) -> nn.Sequential:
    """A 64-hidden-10 MLP trained with the unsafe loss (non-finite batches entries skipped).

    The larger-than-default initial weights (TensorFuzz's NaN model also used an init scale)
    leave directions the data never excites with large weights, so far from the data the
    logits can spread enough for the loss to break while the data itself stays finite.
    """
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 10))
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(init_scale)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        idx = torch.randint(0, 1500, (128,), generator=gen)
        loss = unsafe_cross_entropy(net(x[idx]), y[idx])
        loss = loss[torch.isfinite(loss)].mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return net.eval()


class LossOfLabel(nn.Module):
    """The classifier plus its loss against the seed's (never mutated) label."""

    def __init__(self, net: nn.Module, label: int) -> None:
        super().__init__()
        self.net = net
        self.label = label

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.net(x)
        return unsafe_cross_entropy(logits, torch.full((x.shape[0],), self.label, dtype=torch.long))


def nan_experiment(net: nn.Module, x: torch.Tensor, y: torch.Tensor, seed_rows: list[int],
                   budget: int, threshold: float) -> dict:
    runs: dict[str, list] = {"cgf": [], "random": []}
    for run, row in enumerate(seed_rows):
        model = LossOfLabel(net, int(y[row])).eval()
        config = CgfConfig(max_mutations=budget, mutations_per_item=100, threshold=threshold,
                           sampler="recent", domain=InputDomain(-1.0, 1.0), seed=run)
        for name, search in (("cgf", run_cgf), ("random", run_random)):
            # "net.2" is the logits layer; abs_sum is TensorFuzz's all-logit coverage.
            target = ModelTarget(model, NanObjective(), ["net.2"], coverage="abs_sum")
            result = search(target, x[row:row + 1], config)
            runs[name].append(result)
    found = {k: [r for r in v if r.found] for k, v in runs.items()}
    return {
        "runs": len(seed_rows),
        "budget_mutations": budget,
        "cgf_found": len(found["cgf"]),
        "random_found": len(found["random"]),
        "cgf_mutations_to_first": [r.mutations_to_first for r in runs["cgf"]],
        "random_mutations_to_first": [r.mutations_to_first for r in runs["random"]],
        "cgf_median_mutations_to_first": statistics.median([r.mutations_to_first for r in found["cgf"]])
        if found["cgf"] else None,
        "cgf_seconds": round(sum(r.elapsed_s for r in runs["cgf"]), 2),
        "random_seconds": round(sum(r.elapsed_s for r in runs["random"]), 2),
    }


def fp16_experiment(net: nn.Module, x: torch.Tensor, seed_rows: list[int], budget: int,
                    radius: float, threshold: float) -> dict:
    half = _half_copy(net)
    hits: dict[str, list[bool]] = {"cgf": [], "random": []}
    mutations: dict[str, list] = {"cgf": [], "random": []}
    for i, row in enumerate(seed_rows):
        config = CgfConfig(max_mutations=budget, mutations_per_item=50, threshold=threshold, sampler="recent",
                           domain=InputDomain(-1.0, 1.0, constraint=radius), seed=1000 + i, confirm_runs=3)
        for name, search in (("cgf", run_cgf), ("random", run_random)):
            target = ModelTarget(net, DisagreementObjective(compare="argmax"), (),
                                 test_fn=lambda b: half(b.half()))
            result = search(target, x[row:row + 1], config)
            hits[name].append(result.found)
            mutations[name].append(result.mutations_to_first)
    return {
        "seeds": len(seed_rows),
        "budget_mutations_per_seed": budget,
        "linf_radius": radius,
        "cgf_rate": sum(hits["cgf"]) / len(seed_rows),
        "random_rate": sum(hits["random"]) / len(seed_rows),
        "cgf_mutations_to_first": mutations["cgf"],
        "random_mutations_to_first": mutations["random"],
    }


def _half_copy(net: nn.Module) -> nn.Module:
    import copy

    return copy.deepcopy(net).half().eval()


def overhead_experiment(net: nn.Module, x: torch.Tensor, batch: int, seconds: float) -> dict:
    """Executions (inputs) per second of one forward pass at each instrumentation level."""
    data = x[:batch]
    rates: dict[str, float] = {}
    with torch.no_grad():
        for level in LEVELS:
            run_instrumented(net, (data,), level, net)  # warm-up
            count, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds:
                run_instrumented(net, (data,), level, net)
                count += 1
            rates[level] = count * batch / (time.perf_counter() - start)
    plain = rates["none"]
    return {
        "batch": batch,
        "executions_per_s": {k: round(v, 1) for k, v in rates.items()},
        "slowdown_vs_plain": {k: round(plain / v, 2) for k, v in rates.items() if k != "none"},
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="NaN runs per method (seed images)")
    parser.add_argument("--nan-budget", type=int, default=40_000, help="mutations per NaN run")
    parser.add_argument("--nan-threshold", type=float, default=0.5)
    parser.add_argument("--fp16-seeds", type=int, default=30)
    parser.add_argument("--fp16-budget", type=int, default=10_000, help="mutations per seed image")
    parser.add_argument("--fp16-radius", type=float, default=0.4)
    # Squared L2 on the 10 raw logits (values in the tens): below ~10 nearly every mutant is
    # "new" and the corpus degenerates into a random walk; 50 keeps only real moves.
    parser.add_argument("--fp16-threshold", type=float, default=50.0)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--steps", type=int, default=2_000)
    parser.add_argument("--init-scale", type=float, default=8.0)
    parser.add_argument("--overhead-seconds", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    torch.set_num_threads(1)  # stable timings on a shared machine
    x, y = load_digits_tensors()
    start = time.perf_counter()
    net = train_classifier(x, y, hidden=args.hidden, steps=args.steps, init_scale=args.init_scale, seed=args.seed)
    with torch.no_grad():
        test_logits = net(x[1500:])
        accuracy = float((test_logits.argmax(1) == y[1500:]).float().mean())
        data_nonfinite = int((~torch.isfinite(unsafe_cross_entropy(net(x), y))).sum())
    train_s = time.perf_counter() - start
    print(f"classifier: held-out accuracy {accuracy:.3f}, trained in {train_s:.1f} s, "
          f"non-finite losses on the data set: {data_nonfinite}")

    # Seeds are held-out images the model never trained on.
    nan = nan_experiment(net, x, y, list(range(1500, 1500 + args.runs)), args.nan_budget, args.nan_threshold)
    print(f"NaN: CGF found in {nan['cgf_found']}/{nan['runs']} runs, random in "
          f"{nan['random_found']}/{nan['runs']} (budget {args.nan_budget} mutations each); "
          f"CGF mutations to first: {nan['cgf_mutations_to_first']}  [TensorFuzz: 10/10 vs 0/10]")

    fp16 = fp16_experiment(net, x, list(range(1600, 1600 + args.fp16_seeds)), args.fp16_budget,
                           args.fp16_radius, args.fp16_threshold)
    print(f"fp32 vs fp16: disagreement found for {fp16['cgf_rate']:.0%} of seeds with CGF, "
          f"{fp16['random_rate']:.0%} with random search (L∞ radius {args.fp16_radius}, "
          f"{args.fp16_budget} mutations per seed)  [TensorFuzz: about 70 %]")

    overhead = overhead_experiment(net, x, batch=100, seconds=args.overhead_seconds)
    # The recorders cost a fixed amount per module / op / call, so their relative cost falls as
    # each op does more work: the same levels on a wider network and a bigger batch.
    torch.manual_seed(args.seed)
    wide = nn.Sequential(nn.Linear(64, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)).eval()
    overhead["wide_mlp"] = overhead_experiment(wide, x, batch=512, seconds=args.overhead_seconds)
    for name, rows in (("digits MLP, batch 100", overhead), ("64-1024-1024-10 MLP, batch 512", overhead["wide_mlp"])):
        for level, rate in rows["executions_per_s"].items():
            slowdown = rows["slowdown_vs_plain"].get(level, 1.0)
            print(f"[{name}] instrument={level:<7} {rate:>12.1f} executions/s  ({slowdown}x slower than plain)")

    nan_ratio = (nan["cgf_found"] / nan["random_found"]) if nan["random_found"] else None
    summary = {
        "benchmark": "tensorfuzz_replication",
        "model": {"hidden": args.hidden, "train_steps": args.steps, "init_scale": args.init_scale,
                  "heldout_accuracy": round(accuracy, 4), "train_s": round(train_s, 2),
                  "data_nonfinite_losses": data_nonfinite},
        "nan": nan,
        "fp16": fp16,
        "overhead": overhead,
        # Ratio vs the baseline measured in the same run (None when random found nothing).
        "ratio": {"nan_found_cgf_over_random": nan_ratio,
                  "nan_found_cgf_minus_random": nan["cgf_found"] - nan["random_found"],
                  "fp16_rate_cgf_minus_random": round(fp16["cgf_rate"] - fp16["random_rate"], 4)},
        "tensorfuzz_reported": {"nan_cgf_found": "10/10", "nan_random_found": "0/10", "fp16_rate": 0.7},
        "elapsed_s": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
