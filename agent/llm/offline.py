"""The `offline` backend: the prompt steps answered by deterministic analysis, no model."""

from __future__ import annotations

import json
import time
from typing import Any

from agent.llm.backend import CallRecord, SchemaT, SemanticCheck, cache_key
from agent.llm.errors import LlmConfigError, LlmOutputError


class OfflineBackend:
    """Same interface as the openai backend; what a prompt would ask is computed from the text."""

    name = "offline"
    model = "offline"

    def __init__(self, *, use_opinfo: bool = True) -> None:
        self.use_opinfo = use_opinfo
        self._last: tuple[tuple[str, str, str, str], Any] | None = None

    def _analysis(self, variables: dict[str, Any]) -> Any:
        from agent.extract.analyzer import analyze_issue

        key = tuple(str(variables.get(k, "")) for k in ("title", "body", "labels", "comments", "recording", "state",
                                                         "state_reason"))
        if self._last is None or self._last[0] != key:
            labels = [x.strip() for x in str(variables.get("labels", "")).split(",") if x.strip()]
            comments = [str(variables["comments"])] if variables.get("comments") else []
            analysis = analyze_issue(key[0], key[1], labels, comments, state=str(variables.get("state") or "") or None,
                                     state_reason=str(variables.get("state_reason") or "") or None)
            if key[4]:  # what the repro ran (agent/extract/recorded.py): recorded facts over written ones
                analysis = _with_recording(analysis, key[4], key[1])
            self._last = (key, analysis)  # type: ignore[assignment]
        return self._last[1]  # type: ignore[index]

    concurrency = 1  # CPU-bound analysis with a one-issue memo: no parallel calls

    def structured(
        self, prompt_name: str, variables: dict[str, Any], schema: type[SchemaT],
        *, check: SemanticCheck | None = None,
    ) -> tuple[SchemaT, CallRecord]:
        from agent.extract.analyzer import ANALYZER_VERSION

        started = time.perf_counter()
        if prompt_name == "triage":
            result: Any = self._analysis(variables).triage
        elif prompt_name == "pattern":
            analysis = self._analysis(variables)
            if analysis.pattern is None:
                raise LlmOutputError(analysis.pattern_error or "no pattern found")
            from agent.llm.schemas import PatternAnswer

            result = PatternAnswer(pattern=analysis.pattern)
        elif prompt_name == "api_semantics":
            from agent.extract.semantics import semantics_for

            result = semantics_for(str(variables["api"]), use_opinfo=self.use_opinfo)
        elif prompt_name == "transfer_check":
            from agent.extract.transfer_rules import check_transfer
            from agent.llm.schemas import ApiSemanticsModel
            from agent.patterns import parse_formal

            source = variables.get("source_semantics")
            result = check_transfer(
                parse_formal(str(variables["pattern_formal"])),
                ApiSemanticsModel.model_validate_json(source) if source else None,
                ApiSemanticsModel.model_validate_json(str(variables["target_semantics"])),
            )
        else:
            raise LlmConfigError(f"offline backend has no step {prompt_name!r}")
        obj = schema.model_validate(result.model_dump())
        problem = check(obj) if check is not None else None
        if problem is not None:  # no repair round: the analysis would answer the same again
            raise LlmOutputError(problem)
        record = CallRecord(
            prompt_name=prompt_name,
            prompt_version=f"offline-{ANALYZER_VERSION}",
            model=self.model,
            cache_key=cache_key(prompt_name, ANALYZER_VERSION, self.model, json.dumps(variables, sort_keys=True, default=str)),
            latency_ms=(time.perf_counter() - started) * 1000,
        )
        return obj, record


def _with_recording(analysis: Any, recording_json: str, body: str) -> Any:
    """The analysis with its pattern enriched by the recorded facts (Note [Recorded over written])."""
    import dataclasses

    from pydantic import ValidationError

    from agent.extract.recorded import RecordedFacts, enrich

    try:
        facts = RecordedFacts.model_validate_json(recording_json)
    except ValidationError:
        return analysis
    from agent.extract.analyzer import MAX_REPRO_CHARS
    from agent.transfer.source_repro import report_repro

    repro = analysis.pattern.repro if analysis.pattern is not None else (report_repro(body) or "")[:MAX_REPRO_CHARS]
    pattern, error = enrich(analysis.pattern, analysis.pattern_error, facts, repro=repro,
                            confidence=analysis.triage.confidence)
    return dataclasses.replace(analysis, pattern=pattern, pattern_error=error)
