"""Functionality matching: API similarity from embeddings of what each API computes.

Note [Vector storage]
Vectors are cached in ``api_embeddings`` as plain JSON float arrays on SQLite and PostgreSQL
alike, and similarity is a brute-force cosine in numpy: the public API is under two thousand
entries, so one matrix product per pattern costs microseconds and needs no index. pgvector
would only move that product into the server; ``pgvector_available`` reports whether the server
could host it, and the summary says which storage ran.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from agent.transfer.profile import ApiProfile
from agent.transfer.rank import TfidfSimilarity
from db.queries import embeddings as queries
from db.store import Store


class Embedder(Protocol):
    model: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def embedding_text(profile: ApiProfile, description: str | None = None) -> str:
    """What an API computes, in words: its name, category and (LLM or docstring) summary."""
    leaf = profile.api.rsplit(".", 1)[-1].strip("_").replace("_", " ")
    return f"{leaf} ({profile.category}): {description or profile.summary}".strip()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


@dataclass
class EmbeddingStats:
    embedded: int = 0  # inventory APIs with a vector
    newly_embedded: int = 0  # asked of the endpoint in this run
    query_fallbacks: int = 0  # patterns whose source could not be embedded (scored by TF-IDF)


class EmbeddingSimilarity:
    """Cosine similarity between the source's vector and every target's, from the vector cache."""

    def __init__(self, store: Store, embedder: Embedder, targets: Sequence[ApiProfile], *, torch_version: str,
                 descriptions: Mapping[str, str] | None = None) -> None:
        self.store, self.embedder, self.torch_version = store, embedder, torch_version
        self.descriptions = dict(descriptions or {})
        self.name = f"embeddings:{embedder.model}"
        self.stats = EmbeddingStats()
        self.targets = list(targets)
        self._fallback: TfidfSimilarity | None = None
        vectors = self._vectors_for(self.targets)
        self.stats.embedded = len(vectors)
        self.matrix = _unit_rows(np.array([vectors[t.api] for t in self.targets], dtype=np.float64)) \
            if self.targets else np.zeros((0, 1))
        self.row_of = {t.api: i for i, t in enumerate(self.targets)}

    def _vectors_for(self, profiles: Sequence[ApiProfile]) -> dict[str, list[float]]:
        """Cached vectors, embedding (and storing, one transaction per batch) what is missing or stale."""
        texts = {p.api: embedding_text(p, self.descriptions.get(p.api)) for p in profiles}
        hashes = {api: text_hash(t) for api, t in texts.items()}
        with self.store.session() as session:
            cached = queries.cached_vectors(session, self.embedder.model, self.torch_version, list(texts))
        vectors = {api: c.vector for api, c in cached.items() if c.text_hash == hashes[api]}
        missing = [api for api in texts if api not in vectors]
        batch = getattr(self.embedder, "batch_size", 128)
        for start in range(0, len(missing), batch):
            apis = missing[start:start + batch]
            got = self.embedder.embed([texts[a] for a in apis])
            with self.store.session() as session:
                queries.store_vectors(session, self.embedder.model, self.torch_version,
                                      [(a, hashes[a], v) for a, v in zip(apis, got, strict=True)])
            vectors.update(zip(apis, got, strict=True))
            self.stats.newly_embedded += len(apis)
        return vectors

    def scores(self, source: ApiProfile | None, pattern_api: str) -> np.ndarray:
        if source is not None and source.api in self.row_of:
            query = self.matrix[self.row_of[source.api]]
        else:
            query = self._query_vector(source, pattern_api)
            if query is None:
                self.stats.query_fallbacks += 1
                if self._fallback is None:
                    self._fallback = TfidfSimilarity(self.targets)
                return self._fallback.scores(source, pattern_api)
        return self.matrix @ query

    def _query_vector(self, source: ApiProfile | None, pattern_api: str) -> np.ndarray | None:
        from agent.llm.errors import LlmError

        if source is None:
            source = ApiProfile(api=pattern_api, category="other", summary="", params=(), roles=frozenset(),
                                role_params=(), dtypes=frozenset(), n_tensor_inputs=1, has_out=False,
                                has_inplace=False, has_method=False, is_module=False)
        try:
            vector = self._vectors_for([source])[source.api]
        except LlmError:
            return None
        return _unit_rows(np.array([vector], dtype=np.float64))[0]


def storage_kind(store: Store) -> str:
    """'json' always (Note [Vector storage]); says whether pgvector was there to be used."""
    with store.session() as session:
        available = queries.pgvector_available(session)
    return "json (pgvector available, not needed)" if available else "json"


def describe_stats(similarity: Any) -> dict[str, Any]:
    """The summary fields of whichever matcher ran."""
    stats = getattr(similarity, "stats", None)
    if stats is None:
        return {"matcher": similarity.name, "inventory_embedded": 0}
    return {"matcher": similarity.name, "inventory_embedded": stats.embedded,
            "newly_embedded": stats.newly_embedded, "embedding_query_fallbacks": stats.query_fallbacks}
