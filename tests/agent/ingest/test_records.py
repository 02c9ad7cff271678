"""Source records → IssueRow: GitHub REST objects and `gh issue list --json` (camelCase) output."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agent.ingest.records import BadRecord, PullRequest, normalise
from db.queries.issues import content_hash
from tests.agent.ingest.conftest import SAMPLE_REPO, comments_for, sample_records


def as_gh_cli(issue: dict[str, Any]) -> dict[str, Any]:
    """What `gh issue list --json number,title,body,labels,state,createdAt,updatedAt,url,comments` prints."""
    return {
        "number": issue["number"],
        "title": issue["title"],
        "body": issue["body"],
        "labels": [{"id": f"LA_{label['id']}", "name": label["name"], "description": "", "color": label["color"]} for label in issue["labels"]],
        "state": issue["state"].upper(),
        "createdAt": issue["created_at"],
        "updatedAt": issue["updated_at"],
        "url": issue["html_url"],
        "comments": [
            {
                "id": f"IC_{c['id']}",
                "author": {"login": c["user"]["login"]},
                "authorAssociation": "MEMBER",
                "body": c["body"],
                "createdAt": c["created_at"],
                "includesCreatedEdit": False,
                "isMinimized": False,
                "minimizedReason": "",
                "reactionGroups": [],
                "url": f"{issue['html_url']}#issuecomment-{c['id']}",
                "viewerDidAuthor": False,
            }
            for c in comments_for(issue)
        ],
    }


def _issues() -> list[dict[str, Any]]:
    return [r for r in sample_records() if "pull_request" not in r]


def test_rest_issue() -> None:
    issue = _issues()[1]
    row = normalise(issue)
    assert row.repo == SAMPLE_REPO
    assert row.number == issue["number"]
    assert row.title == issue["title"] and row.body == issue["body"]
    assert row.labels == [label["name"] for label in issue["labels"]]
    assert row.state == "closed"
    assert row.created_at == datetime.fromisoformat(issue["created_at"].replace("Z", "+00:00"))
    assert row.closed_at is not None and row.closed_at.tzinfo == UTC
    assert row.url == issue["html_url"]
    assert row.comments is None  # a REST listing carries only the count
    assert row.raw == {key: value for key, value in issue.items() if key != "body"}  # the body has its column


def test_rest_pull_request_is_recognised() -> None:
    pr = next(r for r in sample_records() if "pull_request" in r)
    with pytest.raises(PullRequest):
        normalise(pr)


def test_gh_cli_record() -> None:
    issue = _issues()[0]
    row = normalise(as_gh_cli(issue))
    assert row.repo == SAMPLE_REPO
    assert row.state == "open"
    assert row.labels == [label["name"] for label in issue["labels"]]
    assert row.comments is not None and len(row.comments) == issue["comments"]
    assert row.comments[0] == {
        "author": "maintainer0",
        "body": comments_for(issue)[0]["body"],
        "created_at": comments_for(issue)[0]["created_at"],
    }


def test_rest_with_embedded_comments_hashes_like_the_gh_cli_record() -> None:
    issue = _issues()[0]
    rest = normalise({**issue, "comments": comments_for(issue)})
    gh = normalise(as_gh_cli(issue))
    assert rest.comments == gh.comments

    def digest(row: Any) -> str:
        return content_hash(row.title, row.body, row.labels, row.state, row.comments)

    assert digest(rest) == digest(gh)


def test_repo_override_and_enterprise_urls() -> None:
    issue = _issues()[0]
    assert normalise(issue, "mirror/pytorch").repo == "mirror/pytorch"
    ghe = {**issue, "repository_url": "https://ghe.example.com/api/v3/repos/ml/torch-fork", "html_url": None}
    assert normalise(ghe).repo == "ml/torch-fork"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"number": None}, "number"),
        ({"number": -3}, "number"),
        ({"title": ["a"]}, "title"),
        ({"created_at": "last tuesday"}, "created_at"),
        ({"repository_url": None, "html_url": None, "url": None}, "no repository"),
    ],
)
def test_bad_records_say_why(change: dict[str, Any], reason: str) -> None:
    with pytest.raises(BadRecord, match=reason):
        normalise({**_issues()[0], **change})


def test_a_record_that_is_not_an_object() -> None:
    with pytest.raises(BadRecord, match="expected a JSON object, got list"):
        normalise([1, 2])
    missing = {k: v for k, v in _issues()[0].items() if k != "state"}
    with pytest.raises(BadRecord, match="state"):
        normalise(missing)
