"""Model fuzzing: load a user's nn.Module, build the second mode, search, localise, report."""

from __future__ import annotations

import copy
import importlib.util
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from fuzz_core.cgf.loop import CgfConfig, CgfResult, run_cgf, run_random
from fuzz_core.cgf.objectives import DisagreementObjective, NanObjective, Objective, Observation
from fuzz_core.cgf.target import ModelTarget
from fuzz_core.instrument.levels import check_level, run_instrumented
from fuzz_core.instrument.modules import ModuleRecorder
from fuzz_core.instrument.ops import OpRecorder
from fuzz_core.localise import (
    bisect_compile_backends,
    compile_stages_up_to,
    first_divergent_module,
    first_divergent_op,
)

OBJECTIVES = ("nan", "disagree:float16", "disagree:bfloat16", "disagree:quantized", "disagree:compile",
              "disagree:against")


class ModelLoadError(ValueError):
    """The FILE.py:FACTORY target or a checkpoint cannot be used; the message says why."""


def load_factory(target: str) -> Callable[[], Any]:
    """Import FILE.py and return its FACTORY attribute (executes the user's own file)."""
    path_text, sep, name = target.rpartition(":")
    if not sep or not path_text or not name:
        raise ModelLoadError(f"target {target!r} must be FILE.py:FACTORY")
    path = Path(path_text)
    if not path.is_file():
        raise ModelLoadError(f"model file {path} does not exist")
    module_name = f"_transfuzz_model_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ModelLoadError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        raise ModelLoadError(f"importing {path} failed: {type(exc).__name__}: {exc}") from exc
    factory = getattr(module, name, None)
    if not callable(factory):
        raise ModelLoadError(f"{path} has no callable {name!r}")
    return factory


@dataclass
class LoadedModel:
    model: nn.Module
    example: torch.Tensor | None  # batch-first example inputs; each row is a seed


def call_factory(factory: Callable[[], Any]) -> LoadedModel:
    """FACTORY() may return a module, or (module, example batch)."""
    made = factory()
    example = None
    if isinstance(made, tuple) and len(made) == 2:
        made, example = made
    if not isinstance(made, nn.Module):
        raise ModelLoadError(f"the factory returned {type(made).__name__}, expected nn.Module or (nn.Module, Tensor)")
    if example is not None and not isinstance(example, torch.Tensor):
        raise ModelLoadError("the factory's example input must be one batch-first tensor")
    return LoadedModel(made.eval(), example)


def load_checkpoint(template: nn.Module, path: str | Path) -> nn.Module:
    """A copy of `template` with a state_dict checkpoint loaded (weights only, no pickled code)."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ModelLoadError(f"cannot load checkpoint {path}: {type(exc).__name__}: {exc}") from exc
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    if not isinstance(state, dict):
        raise ModelLoadError(f"checkpoint {path} holds {type(state).__name__}, expected a state_dict")
    model = copy.deepcopy(template)
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        raise ModelLoadError(f"checkpoint {path} does not fit the model: {str(exc).splitlines()[0]}") from exc
    return model.eval()


@dataclass
class SecondMode:
    """The test side of a disagreement: its model and how a float32 batch is fed to it."""

    label: str
    model: nn.Module | None  # None for compile (the compiled callable wraps the model)
    fn: Callable[[torch.Tensor], object]
    cast: Callable[[torch.Tensor], torch.Tensor]


def build_second_mode(model: nn.Module, objective: str, against: nn.Module | None = None,
                      compile_backend: str = "inductor") -> SecondMode | None:
    """The second mode an objective compares against (None for the NaN objective)."""
    if objective == "nan":
        return None
    if objective in ("disagree:float16", "disagree:bfloat16"):
        dtype = torch.float16 if objective.endswith("float16") else torch.bfloat16
        low = copy.deepcopy(model).to(dtype).eval()

        def cast(batch: torch.Tensor) -> torch.Tensor:
            return batch.to(dtype) if batch.is_floating_point() else batch

        return SecondMode(objective, low, lambda b: low(cast(b)), cast)
    if objective == "disagree:quantized":
        with warnings.catch_warnings():
            # torch.ao dynamic quantization is deprecated in favour of torchao, still shipped.
            warnings.simplefilter("ignore")
            from torch.ao.quantization import quantize_dynamic

            quant = quantize_dynamic(copy.deepcopy(model), {nn.Linear}, dtype=torch.qint8).eval()
        return SecondMode(objective, quant, quant, lambda b: b)
    if objective == "disagree:compile":
        compiled = torch.compile(model, backend=compile_backend, dynamic=False)
        return SecondMode(objective, None, compiled, lambda b: b)
    if objective == "disagree:against":
        if against is None:
            raise ValueError("disagree:against needs a second model (another factory or a checkpoint)")
        return SecondMode(objective, against.eval(), against, lambda b: b)
    raise ValueError(f"unknown objective {objective!r}; choose one of {', '.join(OBJECTIVES)}")


@dataclass
class ModelFuzzConfig:
    objective: str = "nan"
    coverage_layers: Sequence[str] = ()
    coverage: str = "activations"
    compare: str = "argmax"
    instrument: str = "none"
    compile_backend: str = "inductor"
    # Hand an inductor-stage compile mismatch to PyTorch's CompilerBisector (many recompiles).
    compiler_bisector: bool = False
    baseline: bool = False  # also run random search with the same budget
    localise: bool = True
    cgf: CgfConfig = field(default_factory=CgfConfig)


@dataclass
class ModelFuzzReport:
    objective: str
    result: CgfResult
    baseline: CgfResult | None = None
    evidence: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"objective": self.objective, **self.result.to_dict(), "evidence": self.evidence}
        if self.result.failing_input is not None:
            out["failing_input"] = self.result.failing_input.tolist() if self.result.failing_input.numel() <= 4096 else None
        if self.baseline is not None:
            out["random_baseline"] = self.baseline.to_dict()
        return out


def make_objective(objective: str, compare: str) -> Objective:
    if objective == "nan":
        return NanObjective()
    if compare not in ("argmax", "close"):
        raise ValueError(f"unknown comparison {compare!r}; choose argmax or close")
    return DisagreementObjective(compare=compare)


def fuzz_model(model: nn.Module, seeds: torch.Tensor, config: ModelFuzzConfig,
               against: nn.Module | None = None) -> ModelFuzzReport:
    """Search inputs around `seeds` that meet the objective; localise the first one found."""
    check_level(config.instrument)
    model = model.eval()
    second = build_second_mode(model, config.objective, against, config.compile_backend)
    objective = make_objective(config.objective, config.compare)

    def make_target() -> ModelTarget:
        return ModelTarget(model, objective, config.coverage_layers, second.fn if second else None,
                           config.coverage, instrument=config.instrument)

    target = make_target()
    result = run_cgf(target, seeds, config.cgf)
    report = ModelFuzzReport(config.objective, result)
    report.evidence["executions_per_s"] = round(target.executions / max(result.elapsed_s, 1e-9), 1)
    if target.op_keys:
        report.evidence["op_coverage"] = len(target.op_keys)
    if config.baseline:
        report.baseline = run_random(make_target(), seeds, config.cgf)
    if result.failing_input is not None:
        x = result.failing_input.unsqueeze(0)
        if config.instrument != "none":
            _, inst = run_instrumented(model, (x,), config.instrument, model)
            report.evidence["instrumentation"] = inst.to_dict(max_records=100)
        if config.localise:
            report.evidence["localisation"] = localise_failure(model, x, config, second, objective)
    return report


def localise_failure(model: nn.Module, x: torch.Tensor, config: ModelFuzzConfig,
                     second: SecondMode | None, objective: Objective) -> dict:
    """Where the failure starts, for the evidence a report carries."""
    with torch.no_grad():
        if second is None:
            # Two executions: module hooks run torch ops that an op recorder would also log.
            with OpRecorder(with_stats=False) as ops:
                model(x)
            with ModuleRecorder(model, with_stats=False) as mods:
                model(x)
            op = ops.first_nonfinite()
            mod = mods.first_nonfinite()
            return {"first_nonfinite_op": op.to_dict() if op else None,
                    "first_nonfinite_module": mod.name or "<root>" if mod else None}
        if second.model is None:  # compile
            def differs(ref: object, out: object) -> bool:
                return bool(objective(Observation(x, ref, {}, out)).any())

            stages = compile_stages_up_to(config.compile_backend)
            bisection = bisect_compile_backends(model, (x,), backends=stages, differs=differs,
                                                use_compiler_bisector=config.compiler_bisector)
            return {"backend_bisection": bisection.to_dict()}
        tx = second.cast(x)
        mod_div = first_divergent_module(model, second.model, (x,), (tx,))
        op_div = first_divergent_op(model, second.model, (x,), (tx,))
        return {"first_divergent_module": mod_div.to_dict() if mod_div else None,
                "first_divergent_op": op_div.to_dict() if op_div else None}
