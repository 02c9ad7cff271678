"""Links from stored issue names, the Origin rule, tokens, and the verdict checks read back."""

from __future__ import annotations

import pytest

from agent.web.checks import CHECK_NAMES, verdict_checks
from agent.review.lineage import github_issue_url
from agent.web.security import ReviewAuth, allowed_hosts, same_origin


@pytest.mark.parametrize(
    "repo, number, expected",
    [
        ("pytorch/pytorch", 123, "https://github.com/pytorch/pytorch/issues/123"),
        ("javascript:alert(1)//x", 1, None),
        ("evil/../../x", 1, None),
        ("a/b\"onmouseover=x", 1, None),
        ("pytorch/pytorch", 0, None),
        ("trailing-/repo", 1, None),  # GitHub owners never end in a hyphen (the old web-only check let it through)
        ("pytorch/..", 1, None),
    ],
)
def test_issue_links_only_from_plain_owner_and_name(repo: str, number: int, expected: str | None) -> None:
    assert github_issue_url(repo, number) == expected


def test_origin_must_be_this_server() -> None:
    assert same_origin(None, "127.0.0.1:8731")
    assert same_origin("http://127.0.0.1:8731", "127.0.0.1:8731")
    assert not same_origin("http://evil.example", "127.0.0.1:8731")
    assert not same_origin("null", "127.0.0.1:8731")


def test_tokens() -> None:
    auth = ReviewAuth("a-long-enough-review-token")
    assert auth.bearer_ok("Bearer a-long-enough-review-token") and not auth.bearer_ok("Bearer nope")
    assert auth.csrf_ok(auth.csrf) and not auth.csrf_ok("")
    assert auth.csrf != auth.token
    with pytest.raises(ValueError, match="at least 16"):
        ReviewAuth("short")


def test_loopback_bind_answers_loopback_names_only() -> None:
    assert "evil.example" not in allowed_hosts("127.0.0.1")
    assert allowed_hosts("0.0.0.0") == ["*"]


def test_checks_follow_how_far_a_verdict_got() -> None:
    assert [c.status for c in verdict_checks("confirmed", "", {"max_abs_diff": 1.0})] == ["pass"] * 5
    flaky = verdict_checks("flaky", "the difference did not reproduce on re-run", {})
    assert flaky[0].status == "fail"
    nondeterministic = verdict_checks("suspicious", "the reference mode is not deterministic on this input", {})
    assert nondeterministic[1].status == "fail"
    fp64 = verdict_checks("suspicious", "beyond tolerance, fp64 inconclusive: x", {})
    assert fp64[3].status == "inconclusive"
    assert [c.name for c in verdict_checks("crash", "", {})] == list(CHECK_NAMES)
    assert {c.status for c in verdict_checks("crash", "", {})} == {"n/a"}
