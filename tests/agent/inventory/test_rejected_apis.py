"""The inventory (api_semantics) never holds a name fuzz_core's API rule rejects."""

from __future__ import annotations

import torch

from agent.extract import semantics_for
from agent.inventory.enumerate import ApiEntry, enumerate_api
from agent.inventory.refresh import refresh_inventory
from db.queries import transfer as q
from db.store import Store

BOGUS = ["torch.os.system", "os.system", "builtins.eval", "torch.load", "torch.hub.load"]


def _stored(store: Store) -> set[str]:
    with store.session() as session:
        return {s.api for s in q.all_semantics(session)}


def test_refresh_purges_rejected_rows_an_older_version_stored(store: Store) -> None:
    with store.session() as session:
        q.upsert_semantics_rows(session, [{"api": api, "summary": "x", "details": {}} for api in [*BOGUS, "torch.add"]])
        q.record_inventory_snapshot(session, torch.__version__, len(BOGUS) + 1, "offline")
    summary = refresh_inventory(store)  # snapshot present: no recomputation, but the purge runs
    assert not summary.refreshed and set(summary.rejected) == set(BOGUS)
    assert summary.rejected["torch.os.system"] == "re-exported module os"
    assert _stored(store) == {"torch.add"}


def test_refresh_skips_rejected_entries_with_their_reason(store: Store) -> None:
    entries = [ApiEntry("torch.add", "function", False), ApiEntry("torch.save", "function", False),
               ApiEntry("torch.os.system", "function", False)]
    summary = refresh_inventory(store, entries=entries, semantics_fn=semantics_for, force=True)
    assert summary.apis == 1 and summary.rejected == {"torch.save": "denied: reads or writes files",
                                                       "torch.os.system": "re-exported module os"}
    assert _stored(store) == {"torch.add"}


def test_enumeration_lists_no_loader_or_setting() -> None:
    names = {e.api for e in enumerate_api(include_opinfo=False)}
    assert "torch.add" in names and "torch.nn.Conv2d" in names and "torch.Tensor.add_" in names
    assert not names & {"torch.load", "torch.save", "torch.from_file", "torch.compile", "torch.set_default_dtype"}
