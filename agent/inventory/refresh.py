"""Keep the api_semantics table in step with the installed torch: computed once per version."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.inventory.enumerate import ApiEntry, enumerate_api
from db.queries import transfer as q
from db.store import Store

SemanticsFn = Callable[[str], Any]  # api -> ApiSemanticsModel


@dataclass
class InventorySummary:
    apis: int
    refreshed: bool
    failed: int = 0
    rejected: dict[str, str] = field(default_factory=dict)  # api -> why it left (or never entered) the inventory


def _default_semantics_fn() -> SemanticsFn:
    from agent.extract import semantics_for

    return semantics_for


def semantics_row(model: Any, entry: ApiEntry, torch_version: str, source: str) -> dict[str, Any]:
    data = model.model_dump()
    return {
        "api": entry.api,
        "category": data.get("category") or "other",
        "summary": data.get("summary") or "",
        "parameters": data.get("parameters") or [],
        "dtypes": data.get("dtypes") or [],
        "details": {
            "input_domain": data.get("input_domain"),
            "has_out": bool(data.get("has_out")),
            "has_inplace": bool(data.get("has_inplace")),
            "has_method": bool(data.get("has_method")),
            "api_kind": entry.kind,
            "in_opinfo": entry.in_opinfo,
            "is_module": entry.kind == "module",
        },
        "source": source,
        "torch_version": torch_version,
    }


def purge_rejected(store: Store) -> dict[str, str]:
    """Delete stored semantics of names fuzz_core's API rule rejects (rows an older version let in)."""
    from fuzz_core.api_names import rejection_reason

    with store.session() as session:
        stored = [s.api for s in q.all_semantics(session)]
        rejected = {api: reason for api in stored if (reason := rejection_reason(api)) is not None}
        q.delete_semantics(session, list(rejected))
    return rejected


def refresh_inventory(store: Store, *, semantics_fn: SemanticsFn | None = None, force: bool = False,
                      source: str = "offline", entries: list[ApiEntry] | None = None) -> InventorySummary:
    """Compute semantics for every public API unless this torch version's inventory is stored."""
    import torch

    from fuzz_core.api_names import rejection_reason

    version = torch.__version__
    purged = purge_rejected(store)
    with store.session() as session:
        snapshot = q.inventory_snapshot(session, version)
        if snapshot is not None and not force:
            return InventorySummary(apis=snapshot.api_count, refreshed=False, rejected=purged)
    semantics_fn = semantics_fn or _default_semantics_fn()
    entries = entries if entries is not None else enumerate_api()
    rows: list[dict[str, Any]] = []
    failed = 0
    rejected = dict(purged)
    for entry in entries:
        reason = rejection_reason(entry.api)
        if reason is not None:
            rejected[entry.api] = reason
            continue
        try:
            model = semantics_fn(entry.api)
        except Exception:  # an API introspection cannot describe is left out, not fatal
            failed += 1
            continue
        rows.append(semantics_row(model, entry, version, source))
    with store.session() as session:
        for start in range(0, len(rows), 500):
            q.upsert_semantics_rows(session, rows[start : start + 500])
        q.record_inventory_snapshot(session, version, len(rows), source)
    return InventorySummary(apis=len(rows), refreshed=True, failed=failed, rejected=rejected)
