"""The main job as stage functions: ingest → extract → transfer (+ harnesses) → fuzz → summary.

Every stage reads its input from the database and writes its output there, so `transfuzz run`
is these functions in a row and each `transfuzz <stage>` command is one of them.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from agent.config import Settings
from db.store import Store


def transfer_stage(store: Store, settings: Settings, *, top_k: int = 5, limit: int | None = None,
                   refresh: bool = False, err: Console | None = None, matcher: str = "auto",
                   llm_backend: Any | None = None) -> dict[str, Any]:
    """``llm_backend``: the command's backend, so all its LLM stages share one budget and breaker."""
    from agent.harness.stage import generate_harnesses, unsupported_mode
    from agent.inventory.enumerate import opinfo_api_names
    from agent.inventory.refresh import refresh_inventory
    from agent.transfer.matcher import choose_matcher
    from agent.transfer.stage import run_transfer

    if err is not None:
        err.print("transfer: checking the API inventory …", highlight=False)
    inventory = refresh_inventory(store, force=refresh)
    check = input_writer = backend = None
    if settings.effective_llm == "openai":
        from agent.harness.llm_inputs import make_input_writer
        from agent.llm.factory import make_backend
        from agent.transfer.llm_check import make_check

        backend = llm_backend or make_backend(settings, store)
        check, input_writer = make_check(backend), make_input_writer(backend)
    matching = choose_matcher(store, settings, matcher, backend=backend)
    source_profile = _source_profile_fn()
    transfer = run_transfer(store, top_k=top_k, limit=limit, check=check, source_profile=source_profile,
                            unsupported_mode=unsupported_mode, similarity=matching.factory)
    harnesses = generate_harnesses(store, opinfo_api_names(), input_writer=input_writer)
    return {
        "inventory_apis": inventory.apis,
        "inventory_refreshed": inventory.refreshed,
        "patterns": transfer.patterns,
        "candidates": transfer.candidates,
        "vetoed": transfer.vetoed,
        "unparsable_patterns": transfer.unparsable,
        "unsupported_patterns": transfer.unsupported,
        "llm_stopped": transfer.stopped,
        "harnesses": harnesses.harnesses,
        "harnesses_with_llm_inputs": harnesses.llm_inputs,
        "llm_inputs_rejected": harnesses.llm_inputs_rejected,
        "llm_inputs_unavailable": harnesses.llm_inputs_unavailable,
        **matching.summary_fields(),
        "targets": {str(k): v for k, v in transfer.per_pattern.items()},
    }


def _source_profile_fn():  # type: ignore[no-untyped-def]
    """Semantics for a source API outside the inventory (computed on demand, offline)."""
    from agent.transfer.profile import profile_from_semantics

    def profile(api: str):  # type: ignore[no-untyped-def]
        from agent.extract import semantics_for

        try:
            model = semantics_for(api)
        except Exception:
            return None
        data = model.model_dump()
        return profile_from_semantics(api, data.get("category", "other"), data.get("summary", ""),
                                      data.get("parameters", []), data.get("dtypes", []), data)

    return profile


def fuzz_stage(store: Store, config: Any, *, err: Console | None = None) -> dict[str, Any]:
    """The source re-checks' repros (sandboxed, a share of the budget), then the campaign on what is left."""
    import dataclasses

    from agent.campaign.stage import run_campaign
    from agent.transfer.source_recheck import record_harness_verdict
    from agent.transfer.source_repro import SHARE_OF_FUZZ_BUDGET, check_source_repros, repro_share_s

    repros = check_source_repros(store, sandbox=bool(config.sandbox), budget_s=repro_share_s(config.budget_s),
                                 workers=config.workers)
    if err is not None and repros.due:
        err.print(f"source re-check, the reports' own repros (sandboxed): {repros.ran} run ({repros.reproduces}"
                  f" reproduce, {repros.does_not_reproduce} do not, {repros.no_verdict} no verdict), {repros.not_run}"
                  f" not run, {repros.left} left for the next fuzz", highlight=False)
    config = dataclasses.replace(config, budget_s=max(config.budget_s - repros.seconds,
                                                      (1 - SHARE_OF_FUZZ_BUDGET) * config.budget_s))

    def on_result(harness_id: int, result: Any) -> None:
        with store.session() as session:
            record_harness_verdict(session, harness_id, result.verdict, result.reason)
        if err is not None:
            from agent.text_safety import markup_safe  # reasons quote inputs: "[/x]" is data, not markup

            err.print(f"  harness {harness_id}: {markup_safe(result.verdict)} {markup_safe(result.reason[:100])}",
                      highlight=False)

    return {**run_campaign(store, config, on_result=on_result).to_dict(), "source_repros": repros.to_dict()}


def summary(store: Store, *, top: int = 10) -> dict[str, Any]:
    from db.queries.summary import pipeline_counts, top_findings

    with store.session() as session:
        counts = pipeline_counts(session)
        counts["top_confirmed"] = top_findings(session, ("confirmed",), limit=top)
        counts["top_suspicious"] = top_findings(session, ("suspicious",), limit=top)
    return counts


def ingest_stage(store: Store, settings: Settings, source: str, *, limit: int | None = None,
                 filters: dict[str, Any] | None = None) -> dict[str, Any]:
    """``filters``: ingest_source's GitHub filters (labels, state, since, comments)."""
    from agent.ingest import DumpFormatError, GitHubError, ingest_source

    token = settings.github_token.get_secret_value() if settings.github_token else None
    try:
        result = ingest_source(store, source, token=token, limit=limit, **(filters or {}))
    except (DumpFormatError, GitHubError) as exc:
        raise ValueError(str(exc)) from None
    return result.model_dump(mode="json")


def extract_stage(store: Store, settings: Settings, *, llm_backend: Any | None = None,
                  recording: Any | None = None) -> dict[str, Any]:
    """``recording``: RecordingOptions for the reports' repros (agent/extract/record_stage.py), or None."""
    from agent.extract import run_extraction

    result = run_extraction(store, settings, backend=llm_backend, recording=recording)
    return result.to_dict() if hasattr(result, "to_dict") else dict(result)
