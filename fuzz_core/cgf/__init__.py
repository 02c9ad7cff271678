"""Coverage-guided fuzzing (TensorFuzz): corpus, samplers, mutations, objectives, loop."""

from fuzz_core.cgf.corpus import Corpus, CorpusElement
from fuzz_core.cgf.loop import CgfConfig, CgfResult, run_cgf, run_random
from fuzz_core.cgf.mutations import GaussianMutation, InputDomain, SpecialValueMutation, WeightedMutations
from fuzz_core.cgf.objectives import DisagreementObjective, NanObjective, Observation, UserObjective
from fuzz_core.cgf.samplers import recent_sampler, uniform_sampler
from fuzz_core.cgf.target import Fetch, FuzzTarget, ModelTarget

__all__ = [
    "CgfConfig", "CgfResult", "Corpus", "CorpusElement", "DisagreementObjective", "Fetch", "FuzzTarget",
    "GaussianMutation", "InputDomain", "ModelTarget", "NanObjective", "Observation", "SpecialValueMutation",
    "UserObjective", "WeightedMutations", "recent_sampler", "run_cgf", "run_random", "uniform_sampler",
]
