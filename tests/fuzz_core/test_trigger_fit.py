"""Note [Trigger parameters no input fits]: a transferred parameter that no seed input fits is dropped, and said."""

from __future__ import annotations

from fuzz_core import HarnessSpec
from fuzz_core.campaign import build_target_for, seed_samples


def _seeds(api: str, params: dict, source: str = "opinfo"):  # type: ignore[no-untyped-def]
    spec = HarnessSpec(api=api, input_source=source, trigger={"params": params}, seed=3)
    samples, _ = seed_samples(spec, build_target_for(spec))
    return samples


def test_a_shape_parameter_no_input_fits_is_dropped_and_the_rest_kept() -> None:
    seeds = _seeds("torch.nn.functional.layer_norm", {"normalized_shape": [10], "eps": 1e-12})
    assert seeds and all(s.origin.endswith("+without:normalized_shape") for s in seeds)
    assert all(s.kwargs.get("eps") == 1e-12 for s in seeds)
    assert all(s.args[1] != [10] and s.kwargs.get("normalized_shape") != [10] for s in seeds)


def test_parameters_of_another_api_are_dropped_together() -> None:
    seeds = _seeds("torch.index_fill", {"sorted": True, "return_inverse": False, "return_counts": False})
    assert seeds and all(s.origin.endswith("+without:sorted,return_inverse,return_counts") for s in seeds)
    assert all("sorted" not in s.kwargs for s in seeds)


def test_parameters_that_fit_are_kept_as_they_are() -> None:
    seeds = _seeds("torch.nn.functional.layer_norm", {"eps": 1e-3})
    assert seeds and all("+without:" not in s.origin and s.kwargs.get("eps") == 1e-3 for s in seeds)
