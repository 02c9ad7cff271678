"""Choose the matcher for a transfer run: TF-IDF offline, embeddings when configured or asked.

``auto`` uses embeddings when an embeddings model and an endpoint are configured and every
inventory API could be embedded; otherwise it says why and ranks by TF-IDF. ``embeddings``
asked for explicitly fails loudly instead of falling back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agent.config import Settings
from agent.transfer.profile import ApiProfile
from agent.transfer.rank import TextSimilarity
from db.store import Store

Matcher = Literal["tfidf", "embeddings", "auto"]
MATCHERS: tuple[str, ...] = ("tfidf", "embeddings", "auto")


class MatcherUnavailable(ValueError):
    """Embeddings were asked for but cannot run (not configured, or the endpoint failed)."""


@dataclass
class MatcherChoice:
    """The similarity factory handed to ``run_transfer`` and what the summary reports about it."""

    asked: str
    factory: Any = None  # SimilarityFactory | None (None = TF-IDF)
    notes: list[str] = field(default_factory=list)
    similarity: TextSimilarity | None = None
    describe: dict[str, Any] | None = None
    vector_storage: str | None = None

    def summary_fields(self) -> dict[str, Any]:
        from agent.transfer.embeddings import describe_stats

        fields: dict[str, Any] = {"matcher": "tfidf", "inventory_embedded": 0}
        if self.similarity is not None:
            fields.update(describe_stats(self.similarity))
        if self.vector_storage is not None:
            fields["vector_storage"] = self.vector_storage
        if self.describe is not None:
            fields["api_descriptions"] = self.describe
        if self.notes:
            fields["matcher_notes"] = list(self.notes)
        return fields


def choose_matcher(store: Store, settings: Settings, matcher: str, *, backend: Any | None = None) -> MatcherChoice:
    """A factory that builds the embedding similarity, or None for TF-IDF, per ``matcher``."""
    from agent.llm.embeddings import embeddings_configured

    if matcher not in MATCHERS:
        raise MatcherUnavailable(f"unknown matcher {matcher!r}; choose one of {', '.join(MATCHERS)}")
    choice = MatcherChoice(asked=matcher)
    if matcher == "tfidf":
        return choice
    if not embeddings_configured(settings):
        if matcher == "embeddings":
            raise MatcherUnavailable("--matcher embeddings needs TRANSFUZZ_EMBEDDING_MODEL and an endpoint "
                                     "(OPENAI_BASE_URL or OPENAI_API_KEY)")
        return choice

    import torch

    from agent.inventory.describe import describe_inventory, stored_descriptions
    from agent.llm.embeddings import make_embeddings_client
    from agent.llm.errors import LlmError
    from agent.transfer.embeddings import EmbeddingSimilarity, storage_kind

    version = torch.__version__
    choice.vector_storage = storage_kind(store)
    descriptions: dict[str, str] = {}
    if backend is not None and getattr(backend, "name", "") == "openai":
        choice.describe = describe_inventory(store, backend, torch_version=version,
                                             max_calls=settings.describe_max_calls).to_dict()
        descriptions = stored_descriptions(store, torch_version=version, model=backend.model)
    client = make_embeddings_client(settings, budget=getattr(backend, "budget", None))  # run --budget cuts a batch

    def factory(profiles: list[ApiProfile]) -> TextSimilarity | None:
        try:
            choice.similarity = EmbeddingSimilarity(store, client, profiles, torch_version=version,
                                                    descriptions=descriptions)
        except LlmError as exc:
            if matcher == "embeddings":
                raise MatcherUnavailable(f"embeddings failed: {exc}") from None
            choice.notes.append(f"embeddings unavailable, ranked by TF-IDF: {exc}")
            return None
        return choice.similarity

    choice.factory = factory
    return choice
