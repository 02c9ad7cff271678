"""Embedding matcher: ranks by the endpoint's vectors, keeps the gates, caches vectors in the database."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from agent.config import Settings
from agent.llm.embeddings import EmbeddingsClient
from agent.patterns import BugPattern, Mode, Oracle, Trigger
from agent.transfer.embeddings import EmbeddingSimilarity
from agent.transfer.matcher import MatcherUnavailable, choose_matcher
from agent.transfer.profile import ApiProfile, profile_from_semantics
from agent.transfer.rank import TransferIndex
from db import models
from db.store import Store
from tests.agent.llm.fake_openai_server import Reply, ScriptedServer, bag_of_words_vector

TORCH = "9.9.9-test"
FLOATS = ["float16", "float32", "float64"]
BINARY = [{"name": "input", "role": "input", "kind": "tensor"}, {"name": "other", "role": "other_tensor", "kind": "tensor"}]
# The test server's "model" knows that these words name one concept; TF-IDF does not.
SYNONYMS = {"modulus": "remainder", "fmod": "remainder", "residue": "remainder"}


def _profile(api: str, summary: str, dtypes: list[str] = FLOATS) -> ApiProfile:
    return profile_from_semantics(api, "elementwise_binary", summary, BINARY, dtypes, {})


SOURCE = _profile("torch.remainder", "Python-style modulus of input by other, elementwise.")
SIBLING = _profile("torch.fmod", "C-style residue after dividing input by other.")
DECOY = _profile("torch.hypot", "Python-style hypotenuse of input and other, elementwise.")
INT_ONLY = _profile("torch.bitwise_xor", "Python-style modulus residue of input by other, elementwise.", ["int64"])
INVENTORY = [SOURCE, SIBLING, DECOY, INT_ONLY]


def _pattern(test_mode: str = "compile:inductor") -> BugPattern:
    return BugPattern(kind="Compile_Eager_Mismatch", api=SOURCE.api, reference_mode=Mode(name="eager"),
                      test_mode=Mode(name=test_mode), trigger=Trigger(), oracle=Oracle())


def _client(server: ScriptedServer, **kw) -> EmbeddingsClient:
    kw.setdefault("timeout_s", 5.0)
    kw.setdefault("max_retries", 0)
    return EmbeddingsClient(model="bow-test", base_url=server.base_url, api_key="dummy", **kw)


def _targets(index: TransferIndex, pattern: BugPattern | None = None) -> list[str]:
    return [c.target_api for c in index.rank(pattern or _pattern(), SOURCE, top_k=None)]


def test_ranking_follows_the_endpoints_vectors_not_tfidf(store: Store) -> None:
    with ScriptedServer([], embedding_synonyms=SYNONYMS) as server:
        similarity = EmbeddingSimilarity(store, _client(server), INVENTORY, torch_version=TORCH)
        by_embeddings = TransferIndex(INVENTORY, similarity)
        assert by_embeddings.matcher == "embeddings:bow-test"
        embedded = _targets(by_embeddings)
    tfidf = _targets(TransferIndex(INVENTORY))
    assert embedded.index(SIBLING.api) < embedded.index(DECOY.api)
    assert tfidf.index(DECOY.api) < tfidf.index(SIBLING.api)  # TF-IDF sees only the shared words
    assert "functional similarity" in by_embeddings.rank(_pattern(), SOURCE)[0].rationale


def test_gates_still_apply_under_embeddings(store: Store) -> None:
    with ScriptedServer([], embedding_synonyms=SYNONYMS) as server:
        index = TransferIndex(INVENTORY, EmbeddingSimilarity(store, _client(server), INVENTORY, torch_version=TORCH))
        assert INT_ONLY.api in _targets(index)
        assert INT_ONLY.api not in _targets(index, _pattern("dtype:float16"))  # no float16: gated out


def test_vectors_are_cached_in_the_database_and_only_changed_texts_re_embedded(store: Store) -> None:
    with ScriptedServer([], embedding_synonyms=SYNONYMS) as server:
        first = EmbeddingSimilarity(store, _client(server, batch_size=3), INVENTORY, torch_version=TORCH)
        assert first.stats.newly_embedded == 4 and len(server.embedding_requests) == 2  # batches of 3
        again = EmbeddingSimilarity(store, _client(server), INVENTORY, torch_version=TORCH)
        assert again.stats.newly_embedded == 0 and len(server.embedding_requests) == 2
        changed = [SOURCE, SIBLING, DECOY, _profile(INT_ONLY.api, "Bitwise exclusive or.", ["int64"])]
        third = EmbeddingSimilarity(store, _client(server), changed, torch_version=TORCH)
        assert third.stats.newly_embedded == 1 and server.embedding_requests[-1]["input"] == [
            "bitwise xor (elementwise_binary): Bitwise exclusive or."]
    with store.session() as session:
        rows = {r.api: r for r in session.scalars(select(models.ApiEmbedding))}
    assert set(rows) == {p.api for p in INVENTORY}
    assert rows[SIBLING.api].dims == 64 and rows[SIBLING.api].model == "bow-test"
    assert rows[SIBLING.api].vector == pytest.approx(
        bag_of_words_vector("fmod (elementwise_binary): C-style residue after dividing input by other.", SYNONYMS))


def test_a_source_that_cannot_be_embedded_is_ranked_by_tfidf(store: Store) -> None:
    outside = _profile("torch.special.remainder_like", "Python-style modulus of input by other, elementwise.")
    with ScriptedServer([], embedding_synonyms=SYNONYMS) as server:
        similarity = EmbeddingSimilarity(store, _client(server), INVENTORY[1:], torch_version=TORCH)
        server.embedding_faults.append(Reply(status=500))
        ranked = TransferIndex(INVENTORY[1:], similarity).rank(_pattern(), outside, top_k=None)
    assert similarity.stats.query_fallbacks == 1
    tfidf = TransferIndex(INVENTORY[1:]).rank(_pattern(), outside, top_k=None)
    assert [(c.target_api, c.score) for c in ranked] == [(c.target_api, c.score) for c in tfidf]


def test_auto_matcher_is_tfidf_offline_and_embeddings_refuses_without_a_model(store: Store) -> None:
    offline = Settings(llm="offline")
    assert choose_matcher(store, offline, "auto").factory is None
    assert choose_matcher(store, offline, "auto").summary_fields()["matcher"] == "tfidf"
    with pytest.raises(MatcherUnavailable, match="TRANSFUZZ_EMBEDDING_MODEL"):
        choose_matcher(store, offline, "embeddings")


def test_auto_falls_back_to_tfidf_with_a_note_when_the_endpoint_fails(store: Store) -> None:
    with ScriptedServer([], embedding_faults=[Reply(status=500)] * 6) as server:
        settings = Settings(openai_base_url=server.base_url, embedding_model="bow-test", llm_timeout_s=5)
        auto = choose_matcher(store, settings, "auto")
        assert auto.factory(INVENTORY) is None
        fields = auto.summary_fields()
        assert fields["matcher"] == "tfidf" and server.base_url in fields["matcher_notes"][0]
        asked = choose_matcher(store, settings, "embeddings")
        with pytest.raises(MatcherUnavailable, match="HTTP 500"):
            asked.factory(INVENTORY)
