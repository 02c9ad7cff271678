"""LLM descriptions of what inventory APIs compute: batched, budgeted, cached, resumable.

Each call describes a batch of APIs; every valid entry is stored at once under (torch version,
API, prompt version, model), so a run stopped by its call budget or a failing endpoint resumes
with only the APIs still missing. Answers are untrusted data: an entry counts only when its API
is one the batch asked about, and its text is cleaned and capped before it is stored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from db.queries import embeddings as queries
from db.queries import transfer as transfer_queries
from db.store import Store

PROMPT_NAME = "api_describe"
CATEGORIES = frozenset({
    "elementwise_unary", "elementwise_binary", "activation", "reduction", "scan", "pooling", "convolution",
    "normalization", "linear_algebra", "loss", "indexing", "interpolation", "shape", "creation", "random",
    "fft", "module", "other",
})
MAX_SUMMARY = 400
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


class ApiDescription(BaseModel):
    model_config = ConfigDict(extra="ignore")

    api: str
    category: str = "other"
    summary: str = ""


class ApiDescriptionBatch(BaseModel):
    """What the api_describe prompt returns: one entry per API of the batch."""

    model_config = ConfigDict(extra="ignore")

    descriptions: list[ApiDescription] = Field(default_factory=list)


@dataclass
class DescribeSummary:
    model: str
    prompt_version: str
    total: int = 0  # inventory APIs
    cached: int = 0  # described before this run
    described: int = 0  # described in this run
    calls: int = 0
    failed_calls: int = 0
    stopped: str | None = None  # why the run stopped early (budget, endpoint)

    @property
    def missing(self) -> int:
        return self.total - self.cached - self.described

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "prompt_version": self.prompt_version, "total": self.total,
                "cached": self.cached, "described": self.described, "missing": self.missing,
                "calls": self.calls, "failed_calls": self.failed_calls, "stopped": self.stopped}


def _clean(entry: ApiDescription) -> dict[str, str]:
    summary = _CONTROL.sub(" ", entry.summary).strip()[:MAX_SUMMARY]
    category = entry.category if entry.category in CATEGORIES else "other"
    return {"api": entry.api, "category": category, "summary": summary}


def _batch_payload(rows: list[Any]) -> str:
    """The data block: name, parameter names and docstring summary of each API."""
    items = []
    for row in rows:
        params = [p.get("name") if isinstance(p, dict) else str(p) for p in row.parameters or []]
        items.append({"api": row.api, "parameters": [p for p in params if p], "doc": (row.summary or "")[:300]})
    return json.dumps(items, ensure_ascii=False, indent=1)


def describe_inventory(store: Store, backend: Any, *, torch_version: str, max_calls: int,
                       batch_size: int = 20) -> DescribeSummary:
    """Ask the model to describe inventory APIs not yet described, at most ``max_calls`` calls."""
    from agent.llm.errors import LlmBudgetExceeded, LlmError, LlmOutputError, LlmTransportError
    from agent.llm.prompts import prompt_version

    version = prompt_version(PROMPT_NAME)
    summary = DescribeSummary(model=backend.model, prompt_version=version)
    with store.session() as session:
        rows = [r for r in transfer_queries.all_semantics(session) if r.torch_version in (None, torch_version)]
        done = set(queries.descriptions(session, torch_version, version, backend.model))
        session.expunge_all()
    summary.total = len(rows)
    summary.cached = sum(1 for r in rows if r.api in done)
    todo = [r for r in rows if r.api not in done]
    for start in range(0, len(todo), batch_size):
        if summary.calls >= max_calls:
            summary.stopped = f"call budget of {max_calls} spent"
            break
        batch = todo[start:start + batch_size]
        asked = {r.api for r in batch}
        summary.calls += 1
        try:
            answer, _record = backend.structured(PROMPT_NAME, {"apis": _batch_payload(batch)}, ApiDescriptionBatch)
        except LlmOutputError:
            summary.failed_calls += 1  # this batch stays missing; the next run asks again
            continue
        except (LlmBudgetExceeded, LlmTransportError) as exc:
            summary.failed_calls += 1
            summary.stopped = str(exc)
            break
        except LlmError as exc:
            summary.failed_calls += 1
            summary.stopped = f"{type(exc).__name__}: {exc}"
            break
        valid: dict[str, dict[str, str]] = {}
        for entry in answer.descriptions:
            cleaned = _clean(entry)
            if entry.api in asked and cleaned["summary"]:
                valid[entry.api] = cleaned
        with store.session() as session:
            queries.add_descriptions(session, torch_version, version, backend.model, valid.values())
        summary.described += len(valid)
    return summary


def stored_descriptions(store: Store, *, torch_version: str, model: str) -> dict[str, str]:
    """api -> LLM summary for the current prompt version (empty when none were made)."""
    from agent.llm.prompts import prompt_version

    with store.session() as session:
        found = queries.descriptions(session, torch_version, prompt_version(PROMPT_NAME), model)
        return {api: d.summary for api, d in found.items()}
