"""Scoring on real-issue labels: silent-bug recall, kind/API/mode accuracy and their matching rules."""

from __future__ import annotations

from agent.eval.issue_labels import IssueLabel, LabelledIssue
from agent.eval.issue_scoring import api_matches, mode_pair_matches, modes_expressible, score_issues
from agent.eval.scoring import Prediction
from agent.ingest.records import normalise
from tests.agent.eval.issue_dump import issue, label


def _labelled(number: int, verdict: str = "bug", kind: str = "Precision_Mismatch",
              apis: tuple[str, ...] = ("torch.cumsum",), modes: tuple[str, ...] = ("eager", "bfloat16"),
              has_repro: bool = True) -> LabelledIssue:
    row = normalise(issue(number, f"report {number}", "text"))
    return LabelledIssue(IssueLabel.model_validate(label(number, verdict, kind, list(apis), list(modes), has_repro)),
                         row)


PRECISION = Prediction(triage="silent_bug", kind="Precision_Mismatch", api="torch.cumsum",
                       modes=("eager", "dtype:bfloat16"))


def test_a_tensor_method_matches_the_function_of_the_same_op() -> None:
    assert api_matches("torch.cumsum", ["torch.Tensor.cumsum"])
    assert api_matches("torch.Tensor.gather", ["torch.gather"])


def test_an_in_place_variant_matches_its_op() -> None:
    assert api_matches("torch.div", ["torch.Tensor.div_"])


def test_a_tensor_operator_method_matches_the_op_its_operator_runs() -> None:
    assert api_matches("torch.sub", ["torch.Tensor.__isub__"])
    assert api_matches("torch.Tensor.div_", ["torch.Tensor.__truediv__"])
    assert api_matches("torch.matmul", ["torch.Tensor.__rmatmul__"])
    assert api_matches("torch.Tensor.index_put_", ["torch.Tensor.__setitem__"])


def test_an_operator_method_does_not_match_another_op() -> None:
    assert not api_matches("torch.add", ["torch.Tensor.__isub__"])
    assert not api_matches("torch.Tensor.index_select", ["torch.Tensor.__setitem__"])
    assert not api_matches("torch.sub", ["torch.nn.functional.__isub__"])


def test_a_different_namespace_or_kernel_sibling_does_not_match() -> None:
    assert not api_matches("torch.linalg.norm", ["torch.norm"])
    assert not api_matches("torch.var", ["torch.std"])
    assert not api_matches("torch.nn.functional.conv2d", ["torch.nn.Conv2d"])
    assert not api_matches(None, ["torch.norm"])


def test_a_mode_pair_matches_through_the_label_spelling_of_its_test_mode() -> None:
    assert mode_pair_matches(("eager", "dtype:float16"), ["eager", "float16"])
    assert mode_pair_matches(("eager", "compile:inductor"), ["eager", "compile:inductor:max-autotune"])
    assert mode_pair_matches(("eager", "device:cuda"), ["cpu", "cuda"])
    assert not mode_pair_matches(("eager", "jit.script"), ["eager", "jit.trace"])


def test_labels_naming_only_modes_we_cannot_express_are_left_out_of_mode_accuracy() -> None:
    assert not modes_expressible(["eager", "mps"])
    scores = score_issues([(_labelled(3, modes=("cpu", "mps")), PRECISION)])
    assert (scores.modes.hits, scores.modes.total) == (0, 0)


def test_recall_counts_bug_reports_with_a_repro_that_got_a_pattern() -> None:
    scores = score_issues([
        (_labelled(3), PRECISION),
        (_labelled(4), Prediction(triage="silent_bug")),  # triaged right, no pattern
        (_labelled(1, has_repro=False), PRECISION),  # no repro: not a target
        (_labelled(2, verdict="unknown"), PRECISION),  # not a target
    ])
    assert scores.targets == 2
    assert (scores.silent_bug_recall.hits, scores.silent_bug_recall.total) == (1, 2)


def test_kind_and_api_accuracy_are_end_to_end_and_given_a_pattern() -> None:
    wrong_kind = Prediction(triage="silent_bug", kind="NaN_Inf", api="torch.Tensor.cumsum",
                            modes=("eager", "dtype:bfloat16"))
    scores = score_issues([(_labelled(3), PRECISION), (_labelled(4), wrong_kind),
                           (_labelled(11), Prediction(triage="not_silent"))])
    assert (scores.kind.hits, scores.kind.total) == (1, 3)
    assert (scores.kind_given_pattern.hits, scores.kind_given_pattern.total) == (1, 2)
    assert (scores.api.hits, scores.api.total) == (2, 3)
    assert (scores.api_given_pattern.hits, scores.api_given_pattern.total) == (2, 2)


def test_a_label_kind_no_pattern_kind_names_is_never_hit() -> None:
    scores = score_issues([(_labelled(3, kind="Other"), PRECISION)])
    assert (scores.kind.hits, scores.kind.total) == (0, 1)


def test_triage_expects_silent_bug_for_bug_and_not_a_bug_for_not_bug_and_leaves_unknown_out() -> None:
    scores = score_issues([(_labelled(3), PRECISION),
                           (_labelled(4, verdict="not_bug"), Prediction(triage="not_a_bug")),
                           (_labelled(2, verdict="unknown"), PRECISION)])
    assert scores.class_score("silent_bug").precision == 1.0  # the unknown one predicted silent_bug is not a miss
    assert scores.class_score("not_a_bug").recall == 1.0
    assert scores.confusion["unknown"]["silent_bug"] == 1


def test_misses_list_train_issues_only() -> None:
    none = Prediction(triage="not_silent")
    scores = score_issues([(_labelled(3), none), (_labelled(1), none)])  # 3 is train, 1 is eval
    assert [(m.number, m.wrong) for m in scores.misses] == [(3, ["triage", "no pattern"])]


def test_the_numeric_gradient_reference_stands_for_the_reporters_eager_side() -> None:
    # grad:numeric is the oracle's reference, not a mode a reporter compares against.
    assert mode_pair_matches(("grad:numeric", "grad"), ["eager", "autograd"])
    assert not mode_pair_matches(("grad:numeric", "grad"), ["eager", "float16"])


def test_backward_through_compiled_code_matches_a_compile_label() -> None:
    assert mode_pair_matches(("grad", "grad:compile:inductor"), ["eager", "compile:inductor", "autograd"])
