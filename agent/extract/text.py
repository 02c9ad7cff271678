"""Signals in the prose of an issue: labels, keywords, headings and printed differences."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent.extract.codeblocks import CodeBlock

SILENT_LABELS = ("correctness (silent)", "silent", "wrong result", "incorrect result")
NUMERIC_LABELS = ("nans and infs", "numerical-stability", "numerical stability", "half", "bfloat16", "precision")
NOT_BUG_LABELS = ("feature", "enhancement", "module: docs", "question", "rfc")
CRASH_LABELS = ("module: crash", "crash", "segfault")

# The word patterns are lower-case and run on lower-cased text: re.I costs several times more.
_MISMATCH_WORDS = re.compile(
    r"\b(wrong|incorrect|differ(?:s|ent|ence|ences)?|disagree|mismatch(?:es)?|silently|not close|inaccurate|"
    r"inconsistent|off by|returns? (?:-?inf|nan|zeros?)|drops?|ignores?|loses?|instead of|should be|expected|"
    r"inaccurac(?:y|ies)|less accurate|accuracy (?:issues?|problems?|drops?|loss|bugs?)|inconsistenc(?:y|ies)|"
    r"discrepanc(?:y|ies)|corrupt(?:s|ed|ion)?|overwritten|not (?:the )?same)\b",
)
# How a dead process shows in a pasted log: signals, the shell's word for them, a C/C++/Metal assertion (their
# messages quote with a backtick, Python's AssertionError does not), an uncaught C++ exception.
_CRASH_WORDS = re.compile(r"segmentation fault|segfault|core dumped|illegal memory access|sigsegv|sigabrt|sigbus|"
                          r"fatal python error|(?:zsh|bash|sh): (?:abort|segmentation|bus error|illegal instruction)|"
                          r"abort trap|failed assertion `|assertion `[^'\n]{0,200}' failed|"
                          r"terminate called after throwing")
_FEATURE_HEADINGS = re.compile(r"###\s*(?:🚀|📚)|^[^\S\n]*\[(?:feature request|rfc|feature)\]", re.M)
_QUESTION_WORDS = re.compile(
    r"\b(not sure (?:this|if this) is a bug|is (?:this|that) (?:in the )?expected|is that expected|what tolerance|"
    r"supposed to (?:produce|give|return) exactly|should i expect)\b",
)
_FIX_PR = re.compile(r"^[^\S\n]*(?:fixes|closes|resolves)\s+(?:#|https?://\S+/issues/)\d+", re.M)
_NOT_A_BUG = re.compile(r"\bnot a (?:pytorch )?bug\b|\bexpected behaviou?r\b|\bworks as (?:intended|expected)\b")
# The reporter conceding in the description (an edit on closing); "expected behavior" there is a claim or a
# template heading (Note [Tracker conventions] in thread.py), never a verdict.
_CONCEDED = re.compile(r"\bnot a (?:pytorch )?bug\b")
_REFERENCE_WORDS = re.compile(r"\b(?:fp64|float64|fp32|float32|double)\s+ref(?:erence)?\b|\bvs\s+fp(?:32|64)\b|\breference\b")
# Note [Linear-time patterns on issue text]
# Issue text is written by anyone, so no pattern here may backtrack over a long run: a line
# start is ``^[^\S\n]*`` (``^\s*`` re-scans every following blank line from each line start),
# two optional blank runs are never adjacent, and "keyword, then on the same line a value"
# is two searches (see _reported_diffs), not one lazy ``[^\n]*?`` retried from every keyword.
# tests/agent/extract/test_regex_linear.py feeds each pattern its worst 64 KiB body.
_DIFF_KEYWORD = re.compile(r"(?:diff|difference|err(?:or)?)\b", re.I)
_SEPARATOR = re.compile(r"[:=]")
_DIFF_VALUE = re.compile(r"[:=]\s*(?:tensor\(\s*)?(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)", re.I)
_TENSOR_SCALAR = re.compile(r"^[^\S\n]*(?:tensor\()?(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)[^\S\n]*(?:[,)]|$)", re.M)
_GREATEST_DIFF = re.compile(r"Greatest absolute difference:\s*(-?[\d.e+-]+|inf|nan)")
_PRINTS_MAX_ABS = re.compile(r"\.abs\(\)\s*\.max\(\)")
# A fenced block, or an unclosed fence through the end of the text (GitHub renders the rest as code; a report cut
# off inside its repro would otherwise lend its code, imports and comments to the prose). Fences open and close at
# a line start, and an opening one's info string holds no backtick: ```x``` inside a sentence is inline code, the
# reporter's words (```torch.masked_select``` too gives wrong values), not a block.
_FENCED = re.compile(r"^[^\S\n]*```[^`\n]*\n.*?(?:^[^\S\n]*```|\Z)", re.S | re.M)


def without_code(text: str) -> str:
    """The text with its fenced blocks (closed or not) replaced by a space: what the reporter wrote in words."""
    return _FENCED.sub(" ", text)


# A title that names the symptom ("returns NaN", "silently", "wrong", "frozen") is the strongest
# sign of a silent-bug report; one that names an exception, a slowdown or a wish is the opposite.
_TITLE_SYMPTOM = re.compile(
    r"\b(?:nans?|inf|wrong(?:ly)?|incorrect(?:ly)?|differ|differs|different|mismatch(?:es)?|silently|garbage|zeros|"
    r"overflows?|underflows?|ignored|ignores|drops?|loses|lost|frozen|stays fixed|disagree|inaccurate|"
    r"unchanged|scrambled|not match|does not match|doesn't match|inaccurac(?:y|ies)|less accurate|"
    r"(?:accuracy|precision) (?:issues?|problems?|drops?|loss|bugs?)|inconsisten(?:t|cy|cies)|discrepanc(?:y|ies)|"
    r"corrupt(?:s|ed|ion)?|overwritten|not (?:the )?same|(?:precision|numerical) differences?|miscompil\w*|"
    r"not correct|(?:is|are|becomes?|stays?) (?:non-?zero|not zero))\b"
)
# A wrong result the title names beside a crash ("segfaults or drops values"): the report is about both, and the
# silent half is the one to fuzz. Values alone (NaN, inf, zeros) are not it: a crash on a NaN input is a crash.
# "with incorrect inputs", "wrong argument types": the word describes what the caller passed, not the result
_TITLE_WRONG_RESULT = re.compile(
    r"\b(?:(?:wrong|incorrect)(?! (?:inputs?|arguments?|args?|param(?:eter)?s?|usage|shapes?|dtypes?|types?|"
    r"sizes?|indices)\b)(?:ly)?|garbage|drops? values|corrupt(?:s|ed|ion)?|silently|mismatch(?:es)?|"
    r"inconsisten(?:t|cy)|miscompil\w*|not correct)\b"
)
_TITLE_NOT_SILENT = re.compile(
    r"\b(?:raises?|fails?|failed|crash(?:es)?|segfault|slow(?:er)?|leak|recompil\w*|hangs?|build|install|typo|"
    r"docs?|support|feature|rfc|which tolerance|(?:runtime|type|value|index)error)\b"
)
_TITLE_FAILS = re.compile(r"\bfail(?:s|ed)?\b")
# An exception printed in the output (a comparison's own AssertionError/GradcheckError is evidence, not a raise)
_RAISED = re.compile(r"^[^\S\n]*(?:traceback \(most recent call last\)|[\w.]*(?:error|exception|unsupported)\b:)", re.M)
_COMPARISON_ERRORS = ("assertionerror:", "gradcheckerror:")


@dataclass
class TextSignals:
    labels: list[str]
    silent_label: bool
    numeric_label: bool
    not_bug_label: bool
    crash: bool
    feature_or_docs: bool
    question: bool
    fix_pr: bool
    closed_as_not_a_bug: bool
    mismatch_words: int
    mentions_reference: bool
    reported_diffs: list[float] = field(default_factory=list)
    title_symptom: bool = False
    title_not_silent: bool = False
    shows_output: bool = False  # the report shows what the code printed
    raised_error: bool = False  # the output holds an exception other than a failed comparison
    printed_values_differ: bool = False  # Note [Printed values that differ]
    states_expected_value: bool = False  # Note [An expected value stated]
    title_only_fails: bool = False  # the title's only not-silent word is "fails": a check can be what fails
    tf32: str | None = None  # Note [TF32 on Ampere]: why float32 convolutions on CUDA may have run in TF32
    tf32_matmuls: bool = False  # ... and float32 matmuls too (TF32 turned on, or a torch older than 1.12)


def _reported_diffs(output: str) -> list[float]:
    """Numbers printed after "diff"/"error" and a ``:`` or ``=`` on the same line.

    What ``diff\\b[^\\n]*?[:=]\\s*(?:tensor\\()?\\s*NUMBER`` found, in linear time: a keyword
    with no value on its line rules out every later keyword on that line too.
    """
    found: list[float] = []
    pos = 0
    while (keyword := _DIFF_KEYWORD.search(output, pos)) is not None:
        line_end = output.find("\n", keyword.end())
        line_end = len(output) if line_end < 0 else line_end
        value = None
        for separator in _SEPARATOR.finditer(output, keyword.end(), line_end):
            value = _DIFF_VALUE.match(output, separator.start())
            if value is not None:
                break
        if value is None:
            pos = line_end + 1
            continue
        found.append(float(value.group(1)))
        pos = value.end()
    return found


_CODE_COMMENT = re.compile(r"#([^\n]*)")
# Note [An expected value stated]
# "The expected gradient is 0.6944", "should be -2.1788", "# correct result: 1.25": the reporter gives the number
# the code should have produced, the comparison a silent-bug report makes in words when its code prints only the
# other side. The number has a fraction or an exponent (an integer is as often a count: "expected 3 dimensions")
# and no unit after it ("expected 2.5 ms" is a speed); it stands in the same sentence as the claim, at most 80
# characters on, so each claim word is read over a bounded span (Note [Linear-time patterns on issue text]).
_EXPECTED_VALUE = re.compile(
    r"\b(?:expected|expect|should (?:be|give|return|equal|output)|correct (?:value|result|answer|output|gradient)s?)"
    r"\b[^.\n]{0,80}?(?<![\w.])-?(?:\d+\.\d+(?:e[-+]?\d+)?|\d+e[-+]?\d+)\b"
    r"(?![^\S\n]*(?:ms|s|sec|secs|seconds|gb|mb|gib|mib|%|x|times)\b)"
)


def _code_comments(blocks: list[CodeBlock]) -> str:
    """What the reporter wrote beside the code (``# incorrect``, ``# should be 6``): prose inside the repro."""
    return "\n".join(m.group(1) for b in blocks if b.is_python for m in _CODE_COMMENT.finditer(b.text)).lower()


def _labels_match(labels: list[str], needles: tuple[str, ...]) -> bool:
    return any(needle in label for label in labels for needle in needles)


# Note [TF32 on Ampere]
# On NVIDIA GPUs from Ampere on (RTX 30xx/40xx, A100, H100 ...) cuDNN convolutions run float32 in TF32 by default,
# and so did cuBLAS matmuls up to torch 1.11 (torch.backends.cuda.matmul.allow_tf32 has been False by default since
# 1.12): inputs rounded to 10 mantissa bits, about 1e-3 relative. Maintainers close such reports as expected
# (false_alarms.md). `tf32` says why a report's float32 run may have used TF32: the code turns it on, or the
# report names such a GPU (or TF32) and either its convolutions use TF32 by default or its torch is older than
# 1.12; None when the code turns TF32 off (then a difference is not TF32's).
_TF32_GPU = re.compile(r"\btf32\b|\bampere\b|\bhopper\b|\b(?:rtx|geforce)\s?[345]0[5-9]0|\b[345]0[6-9]0(?:\s?ti)?\b"
                       r"|\b(?:a100|a10g?|a30|a40|a800|a6000|h100|h800|h200|gh200|l4|l40s?)\b")
_TF32_ON = re.compile(r"allow_tf32\s*=\s*True|set_float32_matmul_precision\(\s*['\"](?:high|medium)")
_TF32_OFF = re.compile(r"allow_tf32\s*=\s*False|set_float32_matmul_precision\(\s*['\"]highest")
_TORCH_VERSION = re.compile(r"pytorch version:?\s*(\d+)\.(\d+)|\btorch[ =]=?\s*(\d+)\.(\d+)\.\d")


def _tf32(text: str, code: str, labels: list[str]) -> tuple[str | None, bool]:
    """Note [TF32 on Ampere]: why TF32 may have run (None: no reason), and whether matmuls ran in it too."""
    if _TF32_OFF.search(code):
        return None, False
    if _TF32_ON.search(code):
        return "the code turns TF32 on", True
    gpu = _TF32_GPU.search(text)
    if gpu is None and "module: tf32" not in labels:
        return None, False
    named = f"names {gpu.group(0)}" if gpu else "is labelled module: tf32"
    version = _TORCH_VERSION.search(text)
    old = version is not None and (int(version.group(1) or version.group(3)),
                                   int(version.group(2) or version.group(4))) < (1, 12)
    return f"the report {named}" + (" with torch < 1.12 (TF32 matmuls by default)" if old else ""), old


def read_signals(title: str, body: str, labels: list[str], comments: list[str], blocks: list[CodeBlock],
                 environment: str = "") -> TextSignals:
    """What the words say. ``body`` is the text the word rules read (thread.for_rules: no environment dump);
    ``environment`` the report as written, read only for the GPU and torch version (Note [TF32 on Ampere])."""
    low_labels = [label.lower() for label in labels]
    prose = without_code(body.replace("\r\n", "\n")).lower()
    title_low, body_low = title.lower(), body.lower()
    everything = "\n".join([title_low, prose, *(c.lower() for c in comments)])
    output = "\n".join(b.text for b in blocks if not b.is_python)
    diffs = _reported_diffs(output)
    code_prints_diff = any(b.is_python and _PRINTS_MAX_ABS.search(b.text) for b in blocks)
    if code_prints_diff:
        diffs += [float(m) for m in _TENSOR_SCALAR.findall(output)]
    diffs += [float(m) for m in _GREATEST_DIFF.findall(output) if m not in ("inf", "nan")]
    tf32, tf32_matmuls = _tf32("\n".join([title_low, body_low, environment.lower()]),
                               "\n".join(b.text for b in blocks if b.is_python), low_labels)
    return TextSignals(
        labels=low_labels,
        silent_label=_labels_match(low_labels, SILENT_LABELS),
        numeric_label=_labels_match(low_labels, NUMERIC_LABELS),
        not_bug_label=_labels_match(low_labels, NOT_BUG_LABELS),
        crash=(_labels_match(low_labels, CRASH_LABELS) or bool(_CRASH_WORDS.search(title_low + "\n" + body_low)))
        and not _TITLE_WRONG_RESULT.search(title_low),
        feature_or_docs=bool(_FEATURE_HEADINGS.search(title_low + "\n" + body_low)),
        question=bool(_QUESTION_WORDS.search(everything)),
        fix_pr=bool(_FIX_PR.search(body_low)) or _labels_match(low_labels, ("merged", "open source")),
        closed_as_not_a_bug=bool(_CONCEDED.search(prose)) or any(_NOT_A_BUG.search(c.lower()) for c in comments),
        mismatch_words=len(_MISMATCH_WORDS.findall(title_low + "\n" + prose + "\n" + _code_comments(blocks))),
        mentions_reference=bool(_REFERENCE_WORDS.search(everything)),
        reported_diffs=diffs,
        title_symptom=bool(_TITLE_SYMPTOM.search(title_low)),
        title_not_silent=bool(_TITLE_NOT_SILENT.search(title_low)),
        title_only_fails=bool(_TITLE_FAILS.search(title_low)) and not _TITLE_NOT_SILENT.search(
            _TITLE_FAILS.sub(" ", title_low)),
        shows_output=any(not b.is_python for b in blocks),
        raised_error=_raised(output.lower()),
        printed_values_differ=any(_values_differ(b.text) for b in blocks if not b.is_python),
        states_expected_value=bool(_EXPECTED_VALUE.search(prose + "\n" + _code_comments(blocks))),
        tf32=tf32,
        tf32_matmuls=tf32_matmuls,
    )


# Note [Printed values that differ]
# The output a report pastes often *is* its evidence: two lines, one per side, that do not agree
# (``tensor([1., 2.])`` then ``tensor([1., 0.])``, or ``eager: 0.25`` then ``compiled: 0.5``). A value line is a
# printed tensor or array, a bracketed list, or a number, after at most a short label; the values are the
# numbers on it. Two value lines with different values are "printed values that differ". An environment dump
# (collect_env: "PyTorch version: 2.4.1") is not output, nor is a traceback's "line 8".
_VALUE_LINE = re.compile(
    r"^[^\S\n]*(?:[\w .()\[\]'\"-]{1,30}?[:=][^\S\n]*)?(?:tensor\(|array\(|\[|-?\d|nan\b|-?inf\b)")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?)|-?\binf\b|\bnan\b")
_NOT_OUTPUT = ("pytorch version", "[pip", "collecting environment", "traceback (most recent", "cuda used to build")
_DTYPE_SUFFIX = re.compile(r"dtype=torch\.\w+|device='[^']*'|grad_fn=<\w+>|requires_grad=\w+")


def _values_differ(text: str) -> bool:
    low = text.lower()
    if any(marker in low for marker in _NOT_OUTPUT):
        return False
    seen: list[tuple[str, ...]] = []
    for line in low.splitlines()[:200]:
        if len(line) > 400 or not _VALUE_LINE.match(line):
            continue
        values = tuple(_NUMBER.findall(_DTYPE_SUFFIX.sub(" ", line.split(":", 1)[-1] if "tensor(" not in
                                                           line.split(":", 1)[0] else line)))
        if values:
            seen.append(values)
    return len(seen) >= 2 and len(set(seen)) > 1


def _raised(output: str) -> bool:
    """An exception other than a failed comparison; a traceback that ends in an AssertionError is a check failing."""
    lines = [m.group().strip() for m in _RAISED.finditer(output)]
    exceptions = [line for line in lines if not line.startswith("traceback")]
    if not exceptions:
        return bool(lines)  # a traceback cut off before its exception line
    return any(not line.endswith(_COMPARISON_ERRORS) for line in exceptions)
