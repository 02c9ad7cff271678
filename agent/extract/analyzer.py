"""The offline analyzer: one issue's text in, triage and a formal BugPattern out, no code run."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agent.extract.codeblocks import code_blocks, unfenced_code
from agent.extract.modes import ModePair, mode_pair, prints_nan, prints_nonfinite, reports_nonfinite, symptom_kind
from agent.extract.public_ops import api_for_mode, public_op
from agent.extract.scan import CodeFacts, commented_modes, scan_tree
from agent.extract.select import choose_api
from agent.extract.text import read_signals, without_code
from agent.extract.thread import for_rules, split_thread
from agent.extract.triage import TriageInput, tensor_literals, triage
from agent.extract.verdicts import read_verdict, tracker_verdict
from agent.extract.vocab import TRAIN_MODE_MODULES
from agent.llm.schemas import TriageResult
from agent.patterns import BugPattern, Mode, Oracle, OracleKind, PatternKind, Trigger
from fuzz_core.custom_functions import CUSTOM_FUNCTION_API, TIED_INPUTS

ANALYZER_VERSION = "1"
MAX_REPRO_CHARS = 6000
_NAN_WORDS = re.compile(r"\bnan\b|\binf\b|infinit|-inf\b|non-finite", re.I)
_SKIP_PARAMS = {"dtype", "device", "out", "requires_grad", "layout", "memory_format", "generator", "input"}


@dataclass
class Analysis:
    triage: TriageResult
    pattern: BugPattern | None
    pattern_error: str | None
    api_candidates: list[tuple[str, float]] = field(default_factory=list)
    facts: CodeFacts | None = None
    rejected_apis: dict[str, str] = field(default_factory=dict)  # api -> why it may not be fuzzed


# Note [A wrong result with no second mode]
# A silent wrong result the report shows against no second mode of torch (a regression against an older release, a
# value worked out by hand or by another library) still has a differential check: the op against its own reference
# decomposition in torch._decomp (Note [An op against its own decomposition] in fuzz_core/modes/decomp.py), which
# computes the same values apart from the kernel. The fuzzer records it not_applicable where the op has none.
AGAINST_DECOMPOSITION = ModePair(PatternKind.Variant_Mismatch, "eager", "variant:decomp", {}, "fallback")

# Test modes that run the target through other code (compiled, traced, on a device): what a custom Function's
# backward must survive (Note [A custom Function under test] in scan.py)
_THROUGH_ANOTHER_MODE = ("compile:", "grad:compile:", "jit.", "device:", "grad:device:")


def _params(facts: CodeFacts, api: str) -> dict[str, str]:
    params: dict[str, str] = {}
    for call in facts.calls:
        if call.api != api:
            continue
        for key, value in call.kwargs.items():
            if key in _SKIP_PARAMS or value is None or isinstance(value, list | tuple | dict):
                continue
            if isinstance(value, str) and value.startswith("torch."):
                continue
            params.setdefault(key, str(value))
    return params


def _trigger(facts: CodeFacts, modes: ModePair, api: str) -> Trigger:
    dtypes = [d for d in facts.dtypes if d != "float32"]
    if modes.test.startswith(("dtype:", "autocast:")):
        dtypes = [d for d in dtypes if d != modes.test.split(":", 1)[1]]
    specials = list(facts.special_values)
    floats = [abs(n) for n in facts.numbers if n != int(n) or abs(n) >= 1e4]
    if any(n >= 1e4 for n in floats) and "huge" not in specials:
        specials.append("huge")
    if any(0 < n <= 1e-30 for n in floats) and "tiny" not in specials:
        specials.append("tiny")
    shape: list[str] = []
    if any(len(row) == 1 for row in tensor_literals(facts)) or any(
        c.api == "torch.tensor" and c.args and isinstance(c.args[0], int | float) for c in facts.calls
    ):
        shape.append("scalar")
    if "expand" in facts.layout_calls or "expand_as" in facts.layout_calls:
        shape.append("broadcast")
    layout = modes.test.split(":", 1)[1] if modes.test.startswith("layout:") else None
    return Trigger(
        dtypes=dtypes, special_values=specials, layout=layout, shape=shape, params=_params(facts, api)  # type: ignore[arg-type]
    )


def _oracle(facts: CodeFacts, title: str, kind: PatternKind) -> Oracle:
    if kind == PatternKind.Crash:
        return Oracle(kind=OracleKind.Crash)
    if kind == PatternKind.Exception_Mismatch:
        return Oracle(kind=OracleKind.ExceptionConsistency)
    # a title about NaN/Inf means the symptom is where non-finite values appear, not their size
    if kind == PatternKind.NaN_Inf or _NAN_WORDS.search(title):
        return Oracle(kind=OracleKind.NaNConsistency)
    for call in facts.calls:
        if call.api.rsplit(".", 1)[-1] in ("allclose", "assert_close", "isclose", "assert_allclose"):
            atol, rtol = call.kwargs.get("atol"), call.kwargs.get("rtol")
            atol = float(atol) if isinstance(atol, int | float) and atol > 0 else None
            rtol = float(rtol) if isinstance(rtol, int | float) and rtol > 0 else None
            return Oracle(kind=OracleKind.ValueCorrectness, atol=atol, rtol=rtol)
    return Oracle(kind=OracleKind.ValueCorrectness)


def _checked_api(api: str | None, ranked: list[tuple[str, float]]) -> tuple[str | None, dict[str, str]]:
    """The chosen API if torch's public namespace has it, else the best ranked one that passes."""
    from fuzz_core.api_names import rejection_reason

    rejected: dict[str, str] = {}
    for name in [api] + [a for a, score in ranked if score > 0]:
        if name is None or name in rejected:
            continue
        reason = rejection_reason(name)
        if reason is None:
            return name, rejected
        mapped = public_op(name)  # Note [Public op behind internal spellings]
        if mapped is not None:
            return mapped, rejected
        rejected[name] = reason
    return None, rejected


_OVERFLOW_WORD = re.compile(r"\boverflow(?:s|ed|ing)?\b", re.I)
_INTEGER_TYPES = re.compile(r"\b(?:Byte|Char|Short|Int|Long)Tensor\b|\bu?int(?:8|16|32|64)\b|\btorch\.(?:long|short)\b")


def _integer_overflow(title: str, blocks: list[Any]) -> bool:
    """An overflow of integers (uint8 sums wrapping around) is a dtype's arithmetic, not a NaN/Inf to check."""
    return any(_INTEGER_TYPES.search(text) for text in [title, *(b.text for b in blocks)])


# Note [A device in words only]
# Prose that names the CPU and CUDA ("it reproduces on the CPU, so CUDA does not matter") reads as a device pair
# when nothing else names a mode. Where the code puts nothing on an accelerator and the title reports a NaN/Inf
# or an overflow, that result is what the report is about: a NaN/Inf pattern (checked against float64) says so,
# where a device pair would compare the CPU with an accelerator the reporter never ran.
def _device_in_words_only(modes: ModePair, facts: CodeFacts) -> bool:
    return modes.test == "device:cuda" and modes.evidence == "prose" and not facts.devices


def _title_names_nonfinite(title: str, blocks: list[Any]) -> bool:
    """The title reports a NaN/Inf the code produced, or a floating overflow."""
    return reports_nonfinite(title) or _OVERFLOW_WORD.search(title) is not None and not _integer_overflow(
        title, blocks)


def _python_blocks(blocks: list[Any]) -> list[Any]:
    return [b for b in blocks if b.is_python and b.tree is not None]


def _scan_blocks(python_blocks: list[Any]) -> tuple[CodeFacts, bool]:
    """The facts of the blocks' code together, and whether any of it runs torch (a repro)."""
    facts = CodeFacts()
    has_repro = False
    for block in python_blocks:
        try:
            block_facts = scan_tree(block.tree, session=block.session)  # type: ignore[arg-type]
        except RecursionError:  # absurdly deep expressions: read the other blocks and the prose
            continue
        has_repro = has_repro or any(c.api.startswith("torch") for c in block_facts.calls)
        for mode in commented_modes(block.text) if not block_facts.modes else ():
            block_facts.add_mode(mode)
        facts.merge(block_facts)
    return facts, has_repro


# Note [A reduced repro in the comments]
# A report's own code often runs the user's model (a third-party library, a whole network) and names no torch op
# under test; the thread then narrows it down: someone posts the few lines that show it on one op. When the
# description's code gives no API, the comments' code is read with it (its calls first), so the op the thread
# narrowed it to is the API, and the description's modes (devices, dtypes, layouts) still count. Where the
# description names an API, its code stays the evidence: a comment's code may be a workaround or another case.
def analyze_issue(title: str, body: str, labels: list[str], comments: list[str] | None = None, *,
                  state: str | None = None, state_reason: str | None = None) -> Analysis:
    """Triage and pattern of one issue, from its text alone (deterministic).

    ``state``/``state_reason`` are GitHub's (open/closed, completed/not_planned) when known; see
    Note [Tracker conventions] (thread.py) and Note [The tracker's own verdict] (verdicts.py).
    """
    thread = split_thread(body)
    fetched = list(comments or [])
    comments = [*fetched, *thread.others()]
    body = thread.description
    blocks = code_blocks(body)
    python_blocks = _python_blocks(blocks)
    # code in the comments (a maintainer's reduced repro), rendered into the thread or fetched beside it
    reduced = _python_blocks([b for text in [*(c.body for c in thread.comments), *fetched] for b in code_blocks(text)])
    if not python_blocks:  # pasted without a fence, or only in the comments
        python_blocks = unfenced_code(body) or reduced
        blocks += python_blocks
    facts, has_repro = _scan_blocks(python_blocks)
    rules_text = for_rules(body)
    prose = without_code(rules_text)
    api, ranked = choose_api(facts.calls, title, prose, facts.operators, facts.assigned_names)
    if api is None and reduced and python_blocks is not reduced:
        # Note [A reduced repro in the comments]
        reduced_facts, reduced_repro = _scan_blocks(reduced)
        reduced_facts.merge(facts)
        found, found_ranked = choose_api(reduced_facts.calls, title, prose, reduced_facts.operators,
                                         reduced_facts.assigned_names)
        if found is not None:
            api, ranked, facts, has_repro = found, found_ranked, reduced_facts, has_repro or reduced_repro
            python_blocks = [*reduced, *python_blocks]
            blocks += reduced
    signals = read_signals(title, rules_text, labels, comments, blocks, environment=body)
    modes = mode_pair(facts, title, prose, signals)
    # a title that reports a NaN/Inf or an overflow, or torch printing one, is a non-finite result to check
    # against float64 (where no mode pair says more)
    nan_evidence = bool(facts.special_values) or any("nan" in label for label in signals.labels) or (
        _title_names_nonfinite(title, python_blocks)) or prints_nonfinite(rules_text)
    if modes is None and signals.crash:
        modes = ModePair(PatternKind.Crash, "eager", "eager", {}, "text")
    elif nan_evidence and (modes is None or _device_in_words_only(modes, facts) and _title_names_nonfinite(
            title, python_blocks)):
        modes = ModePair(PatternKind.NaN_Inf, "eager", "eager", {}, "text")
    verdict = read_verdict(comments)
    tracker = tracker_verdict(verdict, labels, state, state_reason)
    result = triage(TriageInput(facts, signals, modes, api, has_repro, verdict, tracker, nonfinite=nan_evidence))
    if result.false_alarm_class == "train_mode_tracing":
        # the module that makes the run random is what the (false) report is about
        culprit = next((c.api for c in facts.calls if c.api.rsplit(".", 1)[-1].startswith(TRAIN_MODE_MODULES)), None)
        api = culprit or api
    # triage reads the report as written; the pattern names only an API torch's public namespace has
    api, rejected = _checked_api(api, ranked)
    if modes is None and api is not None and result.is_silent_bug and not signals.crash:
        modes = AGAINST_DECOMPOSITION  # Note [A wrong result with no second mode]
    if facts.custom_function_applied and modes is not None and modes.test.startswith(_THROUGH_ANOTHER_MODE):
        api = CUSTOM_FUNCTION_API  # Note [A custom Function under test] (scan.py)
    pattern, error = None, None
    if api is None and rejected:
        error = "no usable torch API: " + "; ".join(f"{name} rejected ({why})" for name, why in rejected.items())
    elif api is None:
        error = "no torch API found in the issue"
    elif modes is None:
        error = "no differential mode pair found in the code or text"
    else:
        try:
            trigger = _trigger(facts, modes, api)
            if api == CUSTOM_FUNCTION_API and facts.custom_function_tied:
                trigger.params["function"] = TIED_INPUTS
            # Note [A non-finite result names the kind], Note [One side raises] (modes.py)
            printed_nan = "nan" not in facts.special_values and prints_nan(rules_text)
            kind = symptom_kind(modes.kind, title, prose, printed_nan=printed_nan)
            pattern = BugPattern(
                kind=kind,
                api=api_for_mode(api, modes.test),
                reference_mode=Mode(name=modes.reference),
                test_mode=Mode(name=modes.test, options=modes.test_options),
                trigger=trigger,
                oracle=_oracle(facts, title, kind),
                repro=python_blocks[0].text[:MAX_REPRO_CHARS] if python_blocks else "",
                confidence=round(result.confidence, 3),
            )
        except ValueError as exc:  # pydantic ValidationError is a ValueError
            error = f"pattern does not validate: {str(exc).splitlines()[0]}"
    return Analysis(triage=result, pattern=pattern, pattern_error=error, api_candidates=ranked, facts=facts,
                    rejected_apis=rejected)


def operator_ops(body: str) -> frozenset[str]:
    """Ops the issue's code runs through Python's arithmetic operators (``s += x`` runs torch.add unnamed)."""
    return frozenset(call.api for call in analyze_issue("", body, []).facts.operators)


def analyze_raw(issue: dict[str, Any]) -> Analysis:
    """Convenience for GitHub REST issue objects (labels as dicts or names)."""
    labels = [label["name"] if isinstance(label, dict) else str(label) for label in issue.get("labels", [])]
    comments = issue.get("comments")
    texts = [c.get("body", "") for c in comments if isinstance(c, dict)] if isinstance(comments, list) else []
    return analyze_issue(issue.get("title", ""), issue.get("body") or "", labels, texts,
                         state=issue.get("state"), state_reason=issue.get("state_reason"))
