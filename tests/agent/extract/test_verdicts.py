"""Maintainer verdicts in comments, and the title/output signals of silent-bug reports."""

from __future__ import annotations


import pytest

from agent.extract.analyzer import analyze_issue
from agent.extract.codeblocks import code_blocks
from agent.extract.text import read_signals
from agent.extract.verdicts import read_verdict
from tests.agent.extract.test_regex_linear import LINEAR_RATIO_MAX, work_ratio

REPRO = "```python\nimport torch\nx = torch.linspace(-3, 3, 7)\nf = torch.compile(lambda t: torch.remainder(t, 0.3))\nprint(f(x), torch.remainder(x, 0.3))\n```\n"


def test_a_negated_dismissal_is_a_confirmation() -> None:
    verdict = read_verdict(["The kernel uses another formula; that is not expected behaviour. Fixed now."])
    assert verdict.confirmed and not verdict.dismissed and verdict.false_alarm_class is None


@pytest.mark.parametrize(
    ("comment", "named"),
    [
        ("The module is in training mode; call .eval() before tracing. Expected behaviour.", "train_mode_tracing"),
        ("Set torch._inductor.config.fallback_random = True to match eager.", "random_ops"),
        ("With duplicate indices, which write wins is undefined.", "duplicate_indices"),
        ("Any of the tied indices is valid. Not a bug.", "ties"),
        ("Reductions run in a different order; bitwise equality is not promised.", "bitwise_comparison"),
        ("Here the inductor output is more accurate than eager against a double run.", "bitwise_comparison"),
        ("The compiled value is closer to the float64 answer, so nothing to fix.", "bitwise_comparison"),
        ("That is half an ulp of fp16. Working as intended.", "low_precision"),
        ("log of a negative number is NaN in IEEE arithmetic.", "ieee_nan"),
        ("Negative kernel sizes are not a user-facing case. Closing.", "out_of_domain"),
    ],
)
def test_a_dismissal_names_its_false_alarm_class(comment: str, named: str) -> None:
    verdict = read_verdict([comment])
    assert verdict.dismissed and verdict.false_alarm_class == named and not verdict.confirmed


def test_a_confirmation_in_any_comment_wins() -> None:
    verdict = read_verdict(["Is this expected behaviour?", "Reproduced on main, will fix."])
    assert verdict.confirmed and verdict.false_alarm_class is None


@pytest.mark.parametrize("comment", ["This looks like a PyTorch bug: the function is defined for real input too.",
                                     "Seems to be a real bug in the kernel.", "Yes, this is indeed a bug."])
def test_a_maintainer_reading_the_report_as_a_bug_confirms_it(comment: str) -> None:
    assert read_verdict([comment]).confirmed


def test_a_bug_in_the_users_own_code_confirms_nothing() -> None:
    assert not read_verdict(["Looks like a bug in your code: the model is never put in eval mode."]).confirmed


def test_no_comments_say_nothing() -> None:
    assert read_verdict([]) == read_verdict(["thanks for the report"])


def test_comments_turn_a_report_into_a_false_alarm_or_a_bug() -> None:
    title = "remainder under torch.compile differs from eager"
    dismissed = analyze_issue(title, REPRO, [], ["Rounding of the last bit; bitwise equality is not expected. Not a bug."])
    assert dismissed.triage.false_alarm_class == "bitwise_comparison"
    confirmed = analyze_issue(title, REPRO, [], ["That is not expected behaviour, the fix is up."])
    assert confirmed.triage.is_silent_bug and confirmed.triage.false_alarm_class is None


def test_title_symptom_and_raised_error_signals() -> None:
    body = "```\nRuntimeError: shapes do not match\n```\n"
    signals = read_signals("torch.compile raises for a list input", body, [], [], code_blocks(body))
    assert signals.raised_error and signals.title_not_silent and not signals.title_symptom
    checked = "```\nAssertionError: Tensor-likes are not close!\n```\n"
    signals = read_signals("sum silently returns the wrong value", checked, [], [], code_blocks(checked))
    assert signals.title_symptom and signals.shows_output and not signals.raised_error


@pytest.mark.parametrize("unit", ["a" * 500 + "\n", "x." * 400, "not expected behaviour ", "confirmed " * 3 + "\n"])
def test_new_patterns_are_linear_on_64_kib(unit: str) -> None:
    """4x the text (16 KiB -> 64 KiB) costs less than 8x the work (linear 4x, quadratic 16x): the work ratio of
    tests/agent/extract/test_regex_linear.py, not a time limit."""
    def reader(size: int):  # type: ignore[no-untyped-def]
        text = unit * (size // len(unit))
        body = "```\n" + text + "\n```\n"

        def read() -> None:
            read_verdict([text])
            read_signals(text[:2000], body, [], [], code_blocks(body))
        return read

    assert work_ratio(reader(16 * 1024), reader(64 * 1024)) < LINEAR_RATIO_MAX


def test_a_maintainer_calling_every_output_valid_dismisses_the_report() -> None:
    from agent.extract.verdicts import read_verdict

    verdict = read_verdict(["Both algorithms may pick either index here; the outputs you posted are all valid."])
    assert verdict.dismissed and not verdict.confirmed


def test_a_question_sent_to_the_forums_is_dismissed() -> None:
    verdict = read_verdict(["Please ask on https://discuss.pytorch.org, this tracker is for bugs."])
    assert verdict.dismissed and not verdict.confirmed


def test_a_reporter_who_mentions_the_forums_dismisses_nothing() -> None:
    verdict = read_verdict(["I asked about this on the forums first and was told to open an issue."])
    assert not verdict.dismissed


@pytest.mark.parametrize("comment", ["This has been fixed on master, thanks.", "It was fixed a while ago.",
                                     "this is now fixed"])
def test_a_comment_saying_the_report_was_fixed_confirms_it(comment: str) -> None:
    assert read_verdict([comment]).confirmed


def test_fixing_ones_own_code_is_not_a_confirmation() -> None:
    assert not read_verdict(["I fixed my script and the numbers still look odd."]).confirmed
