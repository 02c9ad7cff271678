"""A fuzz run's verdicts as CI results: a gate (which verdicts fail the build), JUnit XML and SARIF 2.1.0.

Both files are written by libraries (junitparser, sarif-pydantic), never by string pasting; reasons quote
fuzzed inputs, so control characters are stripped before they reach XML or JSON a CI tool renders.
"""

from __future__ import annotations

from collections.abc import Sequence

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite
from sarif_pydantic import (ArtifactLocation, Invocation, Level, Location, LogicalLocation, Message,
                            PhysicalLocation, ReportingDescriptor, Result, Run, Sarif, Tool, ToolDriver)

from agent.text_safety import strip_control
from db.queries.run_results import RunVerdict

# --fail-on LEVEL: the verdicts that fail the build at that level (a crash is a bug in the library as surely as a
# confirmed wrong number; a hang only counts when suspicious findings do).
GATES: dict[str, frozenset[str]] = {
    "confirmed": frozenset({"confirmed", "crash"}),
    "suspicious": frozenset({"confirmed", "crash", "suspicious", "hang"}),
}
FAILING = frozenset({"confirmed", "crash", "suspicious", "hang", "flaky"})  # a JUnit <failure>
SKIPPED = frozenset({"inconclusive", "not_applicable"})  # a JUnit <skipped>
SARIF_LEVELS = {"confirmed": Level.ERROR, "crash": Level.ERROR, "suspicious": Level.WARNING, "hang": Level.WARNING}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def gate_failures(verdicts: Sequence[RunVerdict], fail_on: str | None) -> list[RunVerdict]:
    """The verdicts that fail the gate at `fail_on` (none when there is no gate)."""
    if fail_on is None:
        return []
    if fail_on not in GATES:
        raise ValueError(f"--fail-on must be one of {', '.join(GATES)}")
    return [v for v in verdicts if v.verdict in GATES[fail_on]]


def case_name(verdict: RunVerdict) -> str:
    spec = verdict.spec
    return strip_control(f"{spec.get('api', '?')} [{spec.get('reference_mode', '?')} vs {spec.get('test_mode', '?')}, "
                         f"{spec.get('dtype', 'float32')}] harness {verdict.harness_id} finding {verdict.finding_id}")


def junit_xml(run_id: int, verdicts: Sequence[RunVerdict]) -> str:
    """One test case per verdict row; confirmed/crash/suspicious/hang/flaky fail, error errs, inconclusive skips."""
    suite = TestSuite(f"transfuzz fuzz run {run_id}")
    for verdict in verdicts:
        case = TestCase(case_name(verdict), classname=strip_control(verdict.spec.get("kind") or "transfuzz"),
                        time=round(verdict.elapsed_s, 3))
        reason = strip_control(verdict.reason, keep_newlines=True)
        if verdict.verdict in FAILING:
            case.result = [Failure(f"{verdict.verdict}: {reason[:500]}", type_=verdict.verdict)]
        elif verdict.verdict == "error":
            case.result = [Error(reason[:500], type_="harness_error")]
        elif verdict.verdict in SKIPPED:
            case.result = [Skipped(f"{verdict.verdict}: {reason[:500]}")]
        suite.add_testcase(case)
    suite.update_statistics()
    xml = JUnitXml()
    xml.add_testsuite(suite)
    xml.update_statistics()
    text = xml.tostring()
    return text.decode() if isinstance(text, bytes) else str(text)


def sarif_json(run_id: int, verdicts: Sequence[RunVerdict], *, tool_version: str, gate_failed: bool,
               source_uri: str | None = None) -> str:
    """Findings worth a look (confirmed, crash, suspicious, hang) as SARIF results; one rule per pattern kind.
    The API under test is the logical location; `source_uri` (the issue dump) the physical one, when given."""
    shown = [v for v in verdicts if v.verdict in SARIF_LEVELS]
    kinds = sorted({v.spec.get("kind") or "Unknown" for v in shown})
    rules = [ReportingDescriptor(id=kind, name=kind, short_description=Message(text=f"{kind} found by differential fuzzing"))
             for kind in kinds]
    results = []
    for verdict in shown:
        spec = verdict.spec
        location = Location(logical_locations=[LogicalLocation(name=strip_control(spec.get("api", "?")),
                                                               kind="function")],
                            physical_location=PhysicalLocation(artifact_location=ArtifactLocation(uri=source_uri))
                            if source_uri else None)
        results.append(Result(
            rule_id=spec.get("kind") or "Unknown", rule_index=kinds.index(spec.get("kind") or "Unknown"),
            level=SARIF_LEVELS[verdict.verdict],
            message=Message(text=f"{verdict.verdict}: {case_name(verdict)}: {strip_control(verdict.reason)[:1000]}"),
            locations=[location],
            partial_fingerprints={"transfuzzSignature/v1": strip_control(verdict.signature) or str(verdict.harness_id)},
            properties={"verdict": verdict.verdict, "harness_id": verdict.harness_id,
                        "finding_id": verdict.finding_id, "run_id": run_id}))
    log = Sarif(version="2.1.0", schema_uri=SARIF_SCHEMA, runs=[Run(
        tool=Tool(driver=ToolDriver(name="TransFuzz", version=tool_version, rules=rules)),
        invocations=[Invocation(execution_successful=not gate_failed)],
        results=results)])
    return log.model_dump_json(by_alias=True, exclude_none=True, indent=2)
