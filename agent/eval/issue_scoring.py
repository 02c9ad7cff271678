"""Scores of an extractor on labelled real issues: triage, silent-bug recall, kind/API/mode accuracy.

Note [Scoring real-issue labels]
The reports that should become a pattern are those labelled ``verdict: bug`` with
``has_repro: true`` (the *targets*). On them:
- silent-bug recall: the share the extractor turns into a pattern (triage silent_bug and a pattern);
- kind accuracy: the share whose pattern has the label's ``kind`` (exact name; a label kind that no
  PatternKind names, such as ``Other``, cannot be hit);
- API accuracy: the share whose pattern's API matches one of the label's ``apis`` (api_matches);
- mode accuracy: the share whose pattern's mode pair matches the label's ``modes`` (mode_pair_matches),
  over the targets whose labelled modes name at least one mode our pairs can express.
Each is end-to-end (a target with no pattern is a miss) and is also given over the targets that got a
pattern (``..._given_pattern``), so "finds fewer" and "finds them wrong" can be told apart.

Triage: a label ``bug`` expects ``silent_bug``, ``not_bug`` expects ``not_a_bug``; ``unknown`` has no
expected class, so precision/recall/F1 per class are over the issues with a decided verdict, and the
confusion table (rows: labelled verdict, columns: predicted class) shows every issue.

API matching rule (api_matches): exact name, or the same op spelled another way, i.e. both names are
``<namespace>.<leaf>`` with the namespace one of torch, torch.Tensor, torch.nn.functional, torch.special
and the leaves equal once an in-place trailing underscore is dropped (torch.gather = torch.Tensor.gather,
torch.Tensor.div_ = torch.div, torch.special.logit = torch.logit). A Tensor operator method is the op Python's
operator runs (torch.Tensor.__isub__ = torch.sub, __truediv__ = div, __matmul__ = matmul), and
torch.Tensor.__setitem__ is index_put (an indexed write with a tensor index or a mask runs aten::index_put_,
the only indexed write the analyzer names). Nothing else is folded: not
torch.linalg.norm onto torch.norm, not std onto var (agent/review/grouping.py's op_family folds those
for grouping findings, too loose for naming the API under test), not a module class onto its functional.

Mode matching rule (mode_pair_matches): each of our mode names stands for the label spellings in
MODE_LABELS (a ``compile:*`` mode for any label mode starting with ``compile``); the pair matches when
its test mode stands for one of the label's modes and its reference mode is ``eager`` or also does.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from agent.eval.issue_labels import VERDICTS, IssueLabel, LabelledIssue
from agent.eval.labels import TRIAGE_CLASSES
from agent.eval.scoring import Accuracy, ClassScore, Prediction, class_score, triage_dicts

EXPECTED_TRIAGE = {"bug": "silent_bug", "not_bug": "not_a_bug"}
_OP_NAMESPACES = ("torch", "torch.Tensor", "torch.nn.functional", "torch.special")
# Our mode name -> the label spellings it stands for.
MODE_LABELS: dict[str, frozenset[str]] = {
    "eager": frozenset({"eager", "cpu"}),
    "jit.trace": frozenset({"jit.trace"}),
    "jit.script": frozenset({"jit.script"}),
    "dtype:float16": frozenset({"float16", "autocast:float16"}),
    "dtype:bfloat16": frozenset({"bfloat16", "autocast:bfloat16"}),
    "autocast:float16": frozenset({"autocast:float16", "float16"}),
    "autocast:bfloat16": frozenset({"autocast:bfloat16", "bfloat16"}),
    "layout:noncontiguous": frozenset({"non-contiguous", "noncontiguous"}),
    "layout:channels_last": frozenset({"channels_last"}),
    "variant:out": frozenset({"out"}),
    "variant:inplace": frozenset({"in-place", "inplace"}),
    "variant:method": frozenset({"method"}),
    "variant:decomp": frozenset({"decomposition", "decomp"}),
    "device:cuda": frozenset({"cuda"}),
    "grad:device:cuda": frozenset({"cuda"}),
    "quant:dynamic": frozenset({"int8", "fake-quant", "quantized"}),
    "vmap": frozenset({"vmap", "batched"}),
    "grad": frozenset({"autograd", "grad"}),
}


# Tensor operator methods -> the op each runs (API matching rule above); reflected and in-place forms alike.
_OPERATOR_OPS = {
    **{f"__{prefix}{name}__": op for name, op in (
        ("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"), ("floordiv", "floor_divide"),
        ("mod", "remainder"), ("pow", "pow"), ("matmul", "matmul"), ("and", "bitwise_and"), ("or", "bitwise_or"),
        ("xor", "bitwise_xor"), ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift"),
    ) for prefix in ("", "r", "i")},
    "__neg__": "neg", "__abs__": "abs", "__invert__": "bitwise_not", "__eq__": "eq", "__ne__": "ne", "__lt__": "lt",
    "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__setitem__": "index_put",
}


def _op_spelling(api: str) -> tuple[str, str] | None:
    namespace, _, leaf = api.rpartition(".")
    if namespace not in _OP_NAMESPACES or not leaf:
        return None
    if namespace == "torch.Tensor" and leaf in _OPERATOR_OPS:
        return ("op", _OPERATOR_OPS[leaf])
    stripped = leaf[:-1] if leaf.endswith("_") and not leaf.endswith("__") else leaf
    return ("op", stripped) if stripped else None


def api_matches(predicted: str | None, accepted: list[str]) -> bool:
    """The predicted API is one of ``accepted``, or the same op spelled as a function, method or in-place variant."""
    if predicted is None:
        return False
    if predicted in accepted:
        return True
    spelling = _op_spelling(predicted)
    return spelling is not None and any(_op_spelling(name) == spelling for name in accepted)


# References that are the oracle's own, not a mode a reporter compares against: they stand for eager.
ORACLE_REFERENCES = ("eager", "grad:numeric")


def _stands_for(mode: str, label_modes: list[str]) -> bool:
    if mode.startswith(("compile:", "grad:compile:")):  # backward through compiled code is a compile report
        return any(m.startswith("compile") for m in label_modes)
    return bool(MODE_LABELS.get(mode, frozenset()) & set(label_modes))


def modes_expressible(label_modes: list[str]) -> bool:
    """Some mode of ours (other than the eager reference) stands for one of these label modes."""
    return any(_stands_for(mode, label_modes) for mode in [*MODE_LABELS, "compile:inductor"] if mode != "eager")


def mode_pair_matches(predicted: tuple[str, str] | None, label_modes: list[str]) -> bool:
    if predicted is None:
        return False
    reference, test = predicted
    return _stands_for(test, label_modes) and (reference in ORACLE_REFERENCES or _stands_for(reference, label_modes))


@dataclass
class IssueMiss:
    """A train issue the extractor got wrong, and how (eval issues are never listed)."""

    number: int
    verdict: str
    has_repro: bool
    kind: str
    predicted_triage: str
    predicted_kind: str | None
    predicted_api: str | None
    predicted_modes: str | None
    wrong: list[str]


@dataclass
class IssueScores:
    reports: int
    targets: int  # labelled bug with a repro
    triage: list[ClassScore]  # over issues with a decided verdict
    confusion: dict[str, dict[str, int]]  # labelled verdict -> predicted triage class -> count
    silent_bug_recall: Accuracy
    kind: Accuracy
    api: Accuracy
    modes: Accuracy
    kind_given_pattern: Accuracy
    api_given_pattern: Accuracy
    modes_given_pattern: Accuracy
    errors: int
    misses: list[IssueMiss] = field(default_factory=list)

    def class_score(self, label: str) -> ClassScore:
        return next(score for score in self.triage if score.label == label)

    def to_dict(self) -> dict[str, Any]:
        return {
            "reports": self.reports,
            "targets": self.targets,
            "triage": triage_dicts(self.triage),
            "confusion": self.confusion,
            "silent_bug_recall": self.silent_bug_recall.to_dict(),
            "kind": self.kind.to_dict(),
            "api": self.api.to_dict(),
            "modes": self.modes.to_dict(),
            "kind_given_pattern": self.kind_given_pattern.to_dict(),
            "api_given_pattern": self.api_given_pattern.to_dict(),
            "modes_given_pattern": self.modes_given_pattern.to_dict(),
            "errors": self.errors,
            "misses": [asdict(m) for m in self.misses],
        }


def _is_target(label: IssueLabel) -> bool:
    return label.verdict == "bug" and label.has_repro


def _wrong(label: IssueLabel, prediction: Prediction) -> list[str]:
    """What the prediction got wrong for this issue (empty when nothing)."""
    wrong = []
    expected = EXPECTED_TRIAGE.get(label.verdict)
    if expected is not None and prediction.triage != expected:
        wrong.append("triage")
    if _is_target(label):
        if prediction.kind is None:
            wrong.append("no pattern")
        else:
            if prediction.kind != label.kind:
                wrong.append("kind")
            if not api_matches(prediction.api, label.apis):
                wrong.append("api")
            if modes_expressible(label.modes) and not mode_pair_matches(prediction.modes, label.modes):
                wrong.append("modes")
    if prediction.error:
        wrong.append("extractor error")
    return wrong


def score_issues(results: list[tuple[LabelledIssue, Prediction]]) -> IssueScores:
    """All scores of one extractor on labelled real issues (Note [Scoring real-issue labels])."""
    confusion = {verdict: {guess: 0 for guess in TRIAGE_CLASSES} for verdict in VERDICTS}
    decided: list[tuple[str, str]] = []
    recall, kind, api, modes = [0, 0], [0, 0], [0, 0], [0, 0]
    kind_given, api_given, modes_given = [0, 0], [0, 0], [0, 0]
    misses: list[IssueMiss] = []
    for report, prediction in results:
        label = report.label
        confusion[label.verdict][prediction.triage] += 1
        if label.verdict in EXPECTED_TRIAGE:
            decided.append((EXPECTED_TRIAGE[label.verdict], prediction.triage))
        if report.split == "train":
            wrong = _wrong(label, prediction)
            if wrong:
                modes_text = " vs ".join(prediction.modes) if prediction.modes else None
                misses.append(IssueMiss(label.number, label.verdict, label.has_repro, label.kind, prediction.triage,
                                        prediction.kind, prediction.api, modes_text, wrong))
        if not _is_target(label):
            continue
        has_pattern = prediction.kind is not None
        kind_hit = has_pattern and prediction.kind == label.kind
        api_hit = has_pattern and api_matches(prediction.api, label.apis)
        for counter, hit in ((recall, has_pattern), (kind, kind_hit), (api, api_hit)):
            counter[0] += hit
            counter[1] += 1
        if has_pattern:
            for counter, hit in ((kind_given, kind_hit), (api_given, api_hit)):
                counter[0] += hit
                counter[1] += 1
        if modes_expressible(label.modes):
            mode_hit = has_pattern and mode_pair_matches(prediction.modes, label.modes)
            modes[0] += mode_hit
            modes[1] += 1
            if has_pattern:
                modes_given[0] += mode_hit
                modes_given[1] += 1
    return IssueScores(
        reports=len(results),
        targets=recall[1],
        triage=[class_score(name, decided) for name in TRIAGE_CLASSES],
        confusion=confusion,
        silent_bug_recall=Accuracy(*recall),
        kind=Accuracy(*kind),
        api=Accuracy(*api),
        modes=Accuracy(*modes),
        kind_given_pattern=Accuracy(*kind_given),
        api_given_pattern=Accuracy(*api_given),
        modes_given_pattern=Accuracy(*modes_given),
        errors=sum(1 for _, prediction in results if prediction.error),
        misses=misses,
    )
