"""Links from stored issue names, the Origin rule, tokens, and the verdict checks read back."""

from __future__ import annotations

import pytest

from agent.web.checks import verdict_checks
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


def test_the_checks_table_prints_the_recorded_outcomes_not_the_verdict() -> None:
    evidence = {"checks": [
        {"check": "reference_accepts_input", "status": "held", "detail": "ran", "figures": {}},
        {"check": "check_reproducible", "status": "decided", "detail": "the difference did not reproduce on re-run",
         "figures": {"verdict": "flaky"}},
    ]}
    # A verdict that says "confirmed" does not turn a recorded decision into a pass.
    rows = verdict_checks("confirmed", evidence)
    assert [(c.name, c.status) for c in rows] == [("reference accepts input", "held"), ("reproducible", "decided")]


def test_the_checks_table_of_an_older_finding_says_they_were_not_recorded() -> None:
    (row,) = verdict_checks("confirmed", {"max_abs_diff": 1.0})
    assert (row.status, row.detail) == ("not recorded", "checks not recorded (stored by an older version)")
