"""LLM descriptions of the inventory: batched, budgeted, cached per torch version, resumable."""

from __future__ import annotations

import json

from agent.inventory.describe import describe_inventory, stored_descriptions
from agent.llm.openai_backend import OpenAIBackend
from db.queries import transfer as transfer_queries
from db.store import Store
from tests.agent.llm.fake_openai_server import Reply, ScriptedServer

TORCH = "9.9.9-test"
APIS = ["torch.acosh", "torch.asinh", "torch.atanh", "torch.fmod", "torch.remainder"]


def _seed(store: Store, apis: list[str] = APIS, version: str = TORCH) -> None:
    rows = [{"api": api, "category": "other", "summary": f"doc of {api}", "parameters": [{"name": "input"}],
             "dtypes": ["float32"], "details": {}, "torch_version": version} for api in apis]
    with store.session() as session:
        transfer_queries.upsert_semantics_rows(session, rows)


def _answer(apis: list[str], **extra: dict) -> Reply:
    entries = [{"api": api, "category": "elementwise_unary", "summary": f"what {api} computes"} for api in apis]
    return Reply(json.dumps({"descriptions": entries + list(extra.values())}))


def _backend(server: ScriptedServer) -> OpenAIBackend:
    return OpenAIBackend(model="scripted-model", base_url=server.base_url, api_key="dummy", timeout_s=5.0, max_retries=0)


def _asked(request: dict) -> list[str]:
    user = request["body"]["messages"][-1]["content"]
    block = user.split("<apis>", 1)[1].split("</apis>", 1)[0]
    return [item["api"] for item in json.loads(block)]


def test_batches_stop_at_the_call_budget_and_the_next_run_asks_only_the_rest(store: Store) -> None:
    _seed(store)
    with ScriptedServer([_answer(APIS[:2]), _answer(APIS[2:4])]) as server:
        first = describe_inventory(store, _backend(server), torch_version=TORCH, max_calls=2, batch_size=2)
        assert [_asked(r) for r in server.requests] == [APIS[:2], APIS[2:4]]
    assert (first.calls, first.described, first.missing) == (2, 4, 1)
    assert first.stopped == "call budget of 2 spent"
    with ScriptedServer([_answer(APIS[4:])]) as server:
        second = describe_inventory(store, _backend(server), torch_version=TORCH, max_calls=2, batch_size=2)
        assert [_asked(r) for r in server.requests] == [APIS[4:]]
    assert (second.cached, second.described, second.missing, second.stopped) == (4, 1, 0, None)
    assert stored_descriptions(store, torch_version=TORCH, model="scripted-model")["torch.fmod"] == "what torch.fmod computes"


def test_entries_for_apis_not_asked_are_ignored_and_text_is_cleaned(store: Store) -> None:
    _seed(store, APIS[:2])
    intruder = {"api": "os.system", "category": "other", "summary": "run a shell command"}
    dirty = {"api": APIS[1], "category": "made_up", "summary": "inverse\x1b[31m hyperbolic sine " + "x" * 500}
    with ScriptedServer([_answer(APIS[:1], intruder=intruder, dirty=dirty)]) as server:
        summary = describe_inventory(store, _backend(server), torch_version=TORCH, max_calls=5, batch_size=5)
    stored = stored_descriptions(store, torch_version=TORCH, model="scripted-model")
    assert set(stored) == set(APIS[:2]) and summary.described == 2
    assert "\x1b" not in stored[APIS[1]] and len(stored[APIS[1]]) == 400


def test_a_failing_endpoint_stops_the_run_and_keeps_what_was_described(store: Store) -> None:
    _seed(store)
    with ScriptedServer([_answer(APIS[:2])]) as server:  # then HTTP 500 for every request
        summary = describe_inventory(store, _backend(server), torch_version=TORCH, max_calls=10, batch_size=2)
    assert summary.described == 2 and summary.failed_calls == 1 and summary.stopped
    assert set(stored_descriptions(store, torch_version=TORCH, model="scripted-model")) == set(APIS[:2])


def test_descriptions_are_kept_per_torch_version(store: Store) -> None:
    _seed(store, APIS[:1])
    with ScriptedServer([_answer(APIS[:1])]) as server:
        describe_inventory(store, _backend(server), torch_version=TORCH, max_calls=1)
    assert stored_descriptions(store, torch_version="0.0.1-other", model="scripted-model") == {}
    assert list(stored_descriptions(store, torch_version=TORCH, model="scripted-model")) == APIS[:1]
