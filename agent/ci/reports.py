"""A fuzz run's verdicts as CI results: a gate (which verdicts fail the build), JUnit XML and SARIF 2.1.0.

The gate also fails a run that tested nothing (a harness errored, or no input was executed at all) unless
--allow-errors accepts it: a green build must mean some input ran, not that every harness broke.
Both files are written by libraries (junitparser, sarif-pydantic), never by string pasting; reasons quote
fuzzed inputs, so control characters are stripped before they reach XML or JSON a CI tool renders.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite
from sarif_pydantic import (ArtifactLocation, Invocation, Level, Location, LogicalLocation, Message,
                            PhysicalLocation, ReportingDescriptor, Result, Run, Sarif, Tool, ToolDriver)
from sarif_pydantic.sarif import Notification, ReportingDescriptorReference

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
NO_INPUT = frozenset({"error", "not_applicable"})  # the harness never compared an input, whatever it counted
RAN_AN_INPUT = frozenset({"confirmed", "crash", "suspicious", "hang", "flaky"})  # only an executed input earns these
HARNESS_ERROR = "harness_error"  # JUnit error type and SARIF notification id of an errored harness
NOTHING_EXECUTED = "nothing_executed"  # ... and of a run that executed no input
ALLOW_ERRORS_HINT = "--allow-errors to accept"


def gate_failures(verdicts: Sequence[RunVerdict], fail_on: str | None) -> list[RunVerdict]:
    """The verdicts that fail the gate at `fail_on` (none when there is no gate)."""
    if fail_on is None:
        return []
    if fail_on not in GATES:
        raise ValueError(f"--fail-on must be one of {', '.join(GATES)}")
    return [v for v in verdicts if v.verdict in GATES[fail_on]]


def inputs_executed(verdict: RunVerdict) -> int:
    """Inputs this harness really ran: none for error/not_applicable (their counts are of rejected inputs), and at
    least the one a finding was made of (a crashed worker dies before it reports a count)."""
    if verdict.verdict in NO_INPUT:
        return 0
    if verdict.verdict in RAN_AN_INPUT:
        return max(verdict.executions, 1)
    return max(verdict.executions, 0)


def _harnesses(n: int) -> str:
    return f"{n} harness" if n == 1 else f"{n} harnesses"


@dataclass(frozen=True)
class Gate:
    """What --fail-on decided for one run, and each reason, so the log, JUnit and SARIF all say the same."""

    run_id: int
    fail_on: str | None
    allow_errors: bool
    failures: tuple[RunVerdict, ...]  # verdicts at or above the --fail-on level
    errored: tuple[RunVerdict, ...]  # harnesses whose verdict is `error`
    inputs: int  # inputs executed over the whole run
    verdict_counts: tuple[tuple[str, int], ...]  # (verdict, harnesses), sorted

    @property
    def nothing_executed(self) -> bool:
        return self.inputs == 0

    @property
    def errors_fail(self) -> bool:
        """Errors and an empty run fail only a gate that was asked for and not told to accept them."""
        return self.fail_on is not None and not self.allow_errors

    @property
    def failed(self) -> bool:
        return bool(self.failures) or (self.errors_fail and (bool(self.errored) or self.nothing_executed))

    def _errored_part(self) -> tuple[str, str] | None:
        """("2 harnesses errored", "harness 4, 9"): the first few ids, so the log points at what to fix."""
        if not self.errored:
            return None
        ids = [str(v.harness_id) for v in self.errored]
        return f"{_harnesses(len(ids))} errored", "harness " + ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")

    def _nothing_part(self) -> tuple[str, str] | None:
        """("no input was executed", "3 harnesses: 2 error, 1 not_applicable"): the verdicts say why."""
        if not self.nothing_executed:
            return None
        total = sum(n for _, n in self.verdict_counts)
        listed = ", ".join(f"{n} {name}" for name, n in self.verdict_counts)
        return "no input was executed", f"{_harnesses(total)}: {listed}" if total else "no harness ran"

    def error_parts(self) -> list[tuple[str, str]]:
        """(what, detail) for each reason --allow-errors speaks for."""
        return [part for part in (self._errored_part(), self._nothing_part()) if part is not None]

    def nothing_text(self) -> str:
        """"no input was executed (3 harnesses: 2 error, 1 not_applicable)", or "" when inputs ran."""
        part = self._nothing_part()
        return f"{part[0]} ({part[1]})" if part else ""

    def reasons(self) -> list[str]:
        """Every reason the gate failed, one short phrase each (empty when it passed)."""
        out = []
        if self.failures:
            counts = Counter(v.verdict for v in self.failures)
            out.append(", ".join(f"{n} {name}" for name, n in sorted(counts.items())))
        return out + ([f"{what} ({detail})" for what, detail in self.error_parts()] if self.errors_fail else [])

    def accepted(self) -> list[str]:
        """What --allow-errors let through, so the reports never pass an errored or empty run in silence."""
        if self.fail_on is None or not self.allow_errors:
            return []
        return [f"{what} ({detail})" for what, detail in self.error_parts()]

    def log_lines(self) -> list[str]:
        """The lines for stderr: each failing reason, then what --allow-errors accepted."""
        prefix, where = f"gate failed (--fail-on {self.fail_on}):", f"in fuzz run {self.run_id}"
        lines = [f"{prefix} {self.reasons()[0]} {where}"] if self.failures else []
        if self.errors_fail:
            lines += [f"{prefix} {what} {where} ({detail}; {ALLOW_ERRORS_HINT})" for what, detail in self.error_parts()]
        elif self.fail_on is not None:
            lines += [f"gate (--fail-on {self.fail_on}): {what} {where} ({detail}), accepted by --allow-errors"
                      for what, detail in self.error_parts()]
        return lines


def judge_gate(run_id: int, verdicts: Sequence[RunVerdict], fail_on: str | None, *, allow_errors: bool = False) -> Gate:
    """The gate's decision on one run's verdicts (a ValueError on an unknown level)."""
    return Gate(run_id=run_id, fail_on=fail_on, allow_errors=allow_errors,
                failures=tuple(gate_failures(verdicts, fail_on)),
                errored=tuple(v for v in verdicts if v.verdict == "error"),
                inputs=sum(inputs_executed(v) for v in verdicts),
                verdict_counts=tuple(sorted(Counter(v.verdict for v in verdicts).items())))


def case_name(verdict: RunVerdict) -> str:
    spec = verdict.spec
    return strip_control(f"{spec.get('api', '?')} [{spec.get('reference_mode', '?')} vs {spec.get('test_mode', '?')}, "
                         f"{spec.get('dtype', 'float32')}] harness {verdict.harness_id} finding {verdict.finding_id}")


def junit_xml(run_id: int, verdicts: Sequence[RunVerdict], gate: Gate | None = None) -> str:
    """One test case per verdict row; confirmed/crash/suspicious/hang/flaky fail, error errs, inconclusive skips.
    A run that executed no input gets an erring case of its own (an empty suite reads as green); the suite's
    properties carry the inputs executed, the errored harnesses and, with a gate, its decision and reasons."""
    suite = TestSuite(f"transfuzz fuzz run {run_id}")
    for verdict in verdicts:
        case = TestCase(case_name(verdict), classname=strip_control(verdict.spec.get("kind") or "transfuzz"),
                        time=round(verdict.elapsed_s, 3))
        reason = strip_control(verdict.reason, keep_newlines=True)
        if verdict.verdict in FAILING:
            case.result = [Failure(f"{verdict.verdict}: {reason[:500]}", type_=verdict.verdict)]
        elif verdict.verdict == "error":
            case.result = [Error(f"harness error: {reason[:500]}", type_=HARNESS_ERROR)]
        elif verdict.verdict in SKIPPED:
            case.result = [Skipped(f"{verdict.verdict}: {reason[:500]}")]
        suite.add_testcase(case)
    gate = gate or judge_gate(run_id, verdicts, None)
    if gate.nothing_executed:
        case = TestCase(f"fuzz run {run_id}: no input was executed", classname="transfuzz")
        case.result = [Error(gate.nothing_text(), type_=NOTHING_EXECUTED)]
        suite.add_testcase(case)
    suite.add_property("transfuzz.inputs_executed", str(gate.inputs))
    suite.add_property("transfuzz.harnesses_errored", str(len(gate.errored)))
    if gate.fail_on is not None:
        suite.add_property("transfuzz.gate",
                           f"--fail-on {gate.fail_on}" + (" --allow-errors" if gate.allow_errors else ""))
        result = "failed: " + "; ".join(gate.reasons()) if gate.failed else "passed"
        if gate.accepted():
            result += " (accepted by --allow-errors: " + "; ".join(gate.accepted()) + ")"
        suite.add_property("transfuzz.gate_result", result)
    suite.update_statistics()
    xml = JUnitXml()
    xml.add_testsuite(suite)
    xml.update_statistics()
    text = xml.tostring()
    return text.decode() if isinstance(text, bytes) else str(text)


def sarif_json(run_id: int, verdicts: Sequence[RunVerdict], *, tool_version: str, gate: Gate | None = None,
               source_uri: str | None = None) -> str:
    """Findings worth a look (confirmed, crash, suspicious, hang) as SARIF results; one rule per pattern kind.
    The API under test is the logical location; `source_uri` (the issue dump) the physical one, when given.
    An errored harness or a run that executed nothing is a problem of the tool's run, not a finding in the library,
    so it is a tool-execution notification at level error; executionSuccessful is the gate's answer."""
    gate = gate or judge_gate(run_id, verdicts, None)
    shown = [v for v in verdicts if v.verdict in SARIF_LEVELS]
    kinds = sorted({v.spec.get("kind") or "Unknown" for v in shown})
    rules = [ReportingDescriptor(id=kind, name=kind, short_description=Message(text=f"{kind} found by differential fuzzing"))
             for kind in kinds]
    results = []
    for verdict in shown:
        spec = verdict.spec
        results.append(Result(
            rule_id=spec.get("kind") or "Unknown", rule_index=kinds.index(spec.get("kind") or "Unknown"),
            level=SARIF_LEVELS[verdict.verdict],
            message=Message(text=f"{verdict.verdict}: {case_name(verdict)}: {strip_control(verdict.reason)[:1000]}"),
            locations=[_location(verdict, source_uri)],
            partial_fingerprints={"transfuzzSignature/v1": strip_control(verdict.signature) or str(verdict.harness_id)},
            properties={"verdict": verdict.verdict, "harness_id": verdict.harness_id,
                        "finding_id": verdict.finding_id, "run_id": run_id}))
    descriptors, notifications = _notifications(run_id, gate, source_uri)
    # sarif-pydantic's Invocation lacks toolExecutionNotifications; it takes the SARIF 2.1.0 name as an extra
    extra = {"toolExecutionNotifications": notifications} if notifications else {}
    invocation = Invocation(execution_successful=not gate.failed,
                            properties={"inputsExecuted": gate.inputs, "harnessesErrored": len(gate.errored),
                                        "gate": {"failOn": gate.fail_on, "allowErrors": gate.allow_errors,
                                                 "failed": gate.failed, "reasons": gate.reasons()}}, **extra)
    log = Sarif(version="2.1.0", schema_uri=SARIF_SCHEMA, runs=[Run(
        tool=Tool(driver=ToolDriver(name="TransFuzz", version=tool_version, rules=rules,
                                    notifications=descriptors or None)),
        invocations=[invocation],
        results=results)])
    return log.model_dump_json(by_alias=True, exclude_none=True, indent=2)


def _location(verdict: RunVerdict, source_uri: str | None) -> Location:
    return Location(logical_locations=[LogicalLocation(name=strip_control(verdict.spec.get("api", "?")),
                                                       kind="function")],
                    physical_location=PhysicalLocation(artifact_location=ArtifactLocation(uri=source_uri))
                    if source_uri else None)


def _notifications(run_id: int, gate: Gate, source_uri: str | None
                   ) -> tuple[list[ReportingDescriptor], list[Notification]]:
    """The notification descriptors in use, and one error notification per errored harness plus one for a run
    that executed no input."""
    descriptors: list[ReportingDescriptor] = []
    notifications: list[Notification] = []

    def descriptor(id_: str, text: str) -> ReportingDescriptorReference:
        if all(d.id != id_ for d in descriptors):
            descriptors.append(ReportingDescriptor(id=id_, name=id_, short_description=Message(text=text)))
        return ReportingDescriptorReference(id=id_, index=[d.id for d in descriptors].index(id_))

    for verdict in gate.errored:
        notifications.append(Notification(
            descriptor=descriptor(HARNESS_ERROR, "A harness could not run (a tool error, not a library bug)"),
            level=Level.ERROR, locations=[_location(verdict, source_uri)],
            message=Message(text=f"harness error: {case_name(verdict)}: {strip_control(verdict.reason)[:1000]}"),
            properties={"verdict": verdict.verdict, "harness_id": verdict.harness_id,
                        "finding_id": verdict.finding_id, "run_id": run_id}))
    if gate.nothing_executed:
        notifications.append(Notification(
            descriptor=descriptor(NOTHING_EXECUTED, "The fuzz run executed no input, so it tested nothing"),
            level=Level.ERROR, message=Message(text=f"fuzz run {run_id}: {gate.nothing_text()}"),
            properties={"run_id": run_id, "inputs_executed": 0}))
    return descriptors, notifications
