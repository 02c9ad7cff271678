"""Rank target APIs for a pattern: a text similarity (TF-IDF or embeddings) plus structural gates.

Gates are hard: a padding bug transfers only to APIs with padding, an out= bug only to APIs with
out=, a float16 bug only to APIs that support float16. Features then order what passes.

Note [Structural trigger parameters]
A trigger's parameter conditions come from the reporter's repro, so most of them configure the
source API itself (logit's eps, GroupNorm's num_groups/num_channels) rather than say what makes
the bug happen. Only a condition on a structural role (profile.STRUCTURAL_ROLES: padding, stride,
dim, reduction, ...) gates a target out, and so does one whose role is unknown (no source profile,
or a name outside the source's signature). Any other condition is carried over when the target
has a parameter of that name, a synonym (num_channels/num_features) or one with the role the name
names, and otherwise dropped from the adapted trigger, the candidate's rationale saying which and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from agent.patterns import BugPattern
from agent.transfer.profile import FLOAT_DTYPES, STRUCTURAL_ROLES, ApiProfile
from fuzz_core.api_names import check_api, is_public_api
from fuzz_core.custom_functions import CUSTOM_FUNCTION_API

WEIGHTS = {"text": 0.5, "category": 0.2, "roles": 0.15, "arity": 0.15}
FOUR_D_HINTS = ("2d", "conv", "pool", "batch_norm", "instance_norm", "group_norm", "layer_norm", "batchnorm",
                "instancenorm", "groupnorm", "layernorm", "interpolate", "upsample", "pixel")


@dataclass
class RankedCandidate:
    target_api: str
    score: float
    rationale: str
    adapted_trigger: dict
    features: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_api(self.target_api)  # ApiRejected: a candidate is always one of torch's public callables


def gate(pattern: BugPattern, target: ApiProfile, *, source: ApiProfile | None = None) -> str | None:
    """Why the target cannot host the pattern, or None when it can."""
    if pattern.api == CUSTOM_FUNCTION_API:
        # Note [Custom autograd Functions]: the construct is checked on the fuzz core's own Functions (the source
        # harness runs them all unless the pattern names one); an op is not a custom Function
        return "a custom autograd.Function pattern is checked on the fuzz core's own Functions, not on ops"
    for mode in (pattern.reference_mode.name, pattern.test_mode.name):
        if mode == "variant:out" and not target.has_out:
            return "no out= variant"
        if mode == "variant:inplace" and not target.has_inplace:
            return "no in-place variant"
        if mode == "variant:method" and not target.has_method:
            return "no method variant"
        if mode.startswith(("dtype:", "autocast:")) and target.dtypes:
            wanted = mode.split(":", 1)[1]
            if wanted not in target.dtypes:
                return f"does not support {wanted}"
        if mode == "layout:channels_last" and not any(h in target.api.lower() for h in FOUR_D_HINTS):
            return "takes no 4-D (NCHW) input"
    trigger = pattern.trigger
    for name in trigger.params:
        if _is_structural(name, source) and target.param_or_role(name) is None:
            return f"has no {name!r} parameter"
    if trigger.dtypes and target.dtypes and not set(trigger.dtypes) & target.dtypes:
        return f"supports none of {sorted(trigger.dtypes)}"
    if (trigger.special_values or pattern.kind == "NaN_Inf") and target.dtypes and not target.dtypes & FLOAT_DTYPES:
        return "takes no floating-point input"
    return None


def _is_structural(name: str, source: ApiProfile | None) -> bool:
    """Whether a trigger parameter must exist on a target: its role in the source is structural,
    or unknown (no source profile, or a name outside the source's signature), which gates as before."""
    role = source.role_of(name) if source is not None else None
    return role is None or role in STRUCTURAL_ROLES


def dropped_params(pattern: BugPattern, target: ApiProfile) -> list[str]:
    """Trigger parameters the target has no counterpart for (none structural once the gates passed)."""
    return [name for name in pattern.trigger.params if target.param_or_role(name) is None]


def adapt_trigger(pattern: BugPattern, target: ApiProfile, source: ApiProfile | None = None) -> dict:
    """The pattern's trigger in the target's own parameter names, without the source's own parameters
    that the target lacks (Note [Structural trigger parameters])."""
    trigger = pattern.trigger.model_dump()
    params: dict[str, str] = {}
    for name, value in pattern.trigger.params.items():
        mapped = target.param_or_role(name)
        if mapped is not None:
            params.setdefault(mapped, value)
        elif _is_structural(name, source):  # only reached when gate() was not asked
            params[name] = value
    trigger["params"] = params
    if target.dtypes and trigger["dtypes"]:
        trigger["dtypes"] = [d for d in trigger["dtypes"] if d in target.dtypes]
    return trigger


class TextSimilarity(Protocol):
    """How alike a source API and each target are in what they compute, one score per target."""

    name: str  # what the transfer summary reports: "tfidf" or "embeddings:<model>"

    def scores(self, source: ApiProfile | None, pattern_api: str) -> np.ndarray: ...


class TfidfSimilarity:
    """TF-IDF over every target's semantics text, fitted once and queried per pattern (offline default)."""

    name = "tfidf"

    def __init__(self, targets: Sequence[ApiProfile]) -> None:
        self.vectorizer = TfidfVectorizer(token_pattern=r"[A-Za-z][A-Za-z0-9]+", sublinear_tf=True, ngram_range=(1, 2))
        corpus = [t.text for t in targets] or [""]
        self.matrix = self.vectorizer.fit_transform(corpus)

    def text_similarity(self, query_text: str) -> np.ndarray:
        query = self.vectorizer.transform([query_text])
        return (self.matrix @ query.T).toarray().ravel()

    def scores(self, source: ApiProfile | None, pattern_api: str) -> np.ndarray:
        query_text = source.text if source is not None else pattern_api.rsplit(".", 1)[-1].replace("_", " ")
        return self.text_similarity(query_text)


class TransferIndex:
    """Targets scored by a text similarity (TF-IDF unless given another), gated, then ordered."""

    def __init__(self, targets: Sequence[ApiProfile], similarity: TextSimilarity | None = None) -> None:
        self.targets = list(targets)
        self.by_api = {t.api: i for i, t in enumerate(self.targets)}
        self.similarity: TextSimilarity = similarity if similarity is not None else TfidfSimilarity(self.targets)

    @property
    def matcher(self) -> str:
        return self.similarity.name

    def rank(self, pattern: BugPattern, source: ApiProfile | None, *, top_k: int | None = 5) -> list[RankedCandidate]:
        """The best ``top_k`` targets that pass the gates (all of them when ``top_k`` is None)."""
        sims = self.similarity.scores(source, pattern.api)
        ranked: list[RankedCandidate] = []
        for i, target in enumerate(self.targets):
            if _same_api(target.api, pattern.api) or not is_public_api(target.api):
                continue
            why_not = gate(pattern, target, source=source)
            if why_not is not None:
                continue
            features = _features(source, target, float(sims[i]))
            score = sum(WEIGHTS[k] * v for k, v in features.items())
            rationale = _rationale(features, source, target, self.similarity.name)
            dropped = dropped_params(pattern, target)
            if dropped:
                rationale += "; " + _dropped_note(pattern, dropped)
            ranked.append(RankedCandidate(target.api, round(score, 4), rationale,
                                          adapt_trigger(pattern, target, source), features))
        ranked.sort(key=lambda c: (-c.score, c.target_api))
        return ranked if top_k is None else ranked[:top_k]


def _same_api(a: str, b: str) -> bool:
    """torch.relu6, torch.nn.functional.relu6 and torch.Tensor.relu6 are one API for transfer."""
    leaf_a, leaf_b = a.rsplit(".", 1)[-1].rstrip("_"), b.rsplit(".", 1)[-1].rstrip("_")
    return a == b or (leaf_a == leaf_b and not (a.split(".")[-1][:1].isupper() ^ b.split(".")[-1][:1].isupper()))


def _dropped_note(pattern: BugPattern, dropped: list[str]) -> str:
    own = "constructor" if pattern.api.rsplit(".", 1)[-1][:1].isupper() else "signature"
    conditions = ", ".join(f"{name}={pattern.trigger.params[name]}" for name in dropped)
    return (f"trigger drops {conditions}: a parameter of {pattern.api}'s own {own}, not a structural "
            "requirement, and the target has no counterpart")


def _features(source: ApiProfile | None, target: ApiProfile, text_sim: float) -> dict[str, float]:
    if source is None:
        return {"text": text_sim, "category": 0.0, "roles": 0.0, "arity": 0.0}
    union = source.roles | target.roles
    roles = len(source.roles & target.roles) / len(union) if union else 0.5
    widest = max(source.n_tensor_inputs, target.n_tensor_inputs, 1)
    arity = 1.0 - abs(source.n_tensor_inputs - target.n_tensor_inputs) / widest
    category = 1.0 if source.category == target.category and source.category != "other" else 0.0
    return {"text": text_sim, "category": category, "roles": roles, "arity": arity}


def _rationale(features: dict[str, float], source: ApiProfile | None, target: ApiProfile, matcher: str) -> str:
    if matcher == TfidfSimilarity.name:
        parts = [f"semantic text similarity {features['text']:.2f}"]
    else:
        parts = [f"functional similarity {features['text']:.2f} ({matcher})"]
    if source is not None:
        if features["category"]:
            parts.append(f"same category {target.category!r}")
        shared = sorted(source.roles & target.roles)
        if shared:
            parts.append("shares parameter roles " + ", ".join(shared))
        parts.append(f"{target.n_tensor_inputs} tensor input(s) vs {source.n_tensor_inputs}")
    parts.append("supports the pattern's modes and trigger")
    return "; ".join(parts)
