"""Lineage both ways on the review pages (Note [Lineage pages]): issue → pattern → candidate → harness → finding and
back, each page linking the next and the previous; real server, SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from db.store import Store
from tests.agent.review.rows import Lineage, add_finding, build_lineage
from tests.agent.web.rows import add_open_candidates
from tests.agent.web.server import review_server


@dataclass
class Rows:
    lineage: Lineage
    confirmed: int
    passed: int
    direct: int
    open_candidates: dict[str, int]


@pytest.fixture
def rows(store: Store) -> Rows:
    with store.session() as session:
        lineage = build_lineage(session)
        return Rows(lineage=lineage, confirmed=add_finding(session, lineage.harness_id),
                    passed=add_finding(session, lineage.harness_id, verdict="passed", signature=""),
                    direct=add_finding(session, lineage.direct_harness_id, verdict="suspicious", signature=""),
                    open_candidates=add_open_candidates(session, lineage.pattern_id))


@pytest.fixture
def client(store: Store, rows: Rows) -> Iterator[httpx.Client]:
    with review_server(store) as server, httpx.Client(base_url=server.base_url, timeout=30) as c:
        yield c


def _links(html: str, prefix: str) -> set[int]:
    return {int(n) for n in re.findall(rf'href="/{prefix}/(\d+)"', html)}


def _page(client: httpx.Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.text[:300])
    return response.text


def test_walk_forward_from_the_issue_to_the_findings(client: httpx.Client, rows: Rows) -> None:
    lin = rows.lineage
    issue = _page(client, f"/issues/{lin.issue_id}")
    assert "gelu gives wrong values under torch.compile" in issue
    assert 'href="https://github.com/pytorch/pytorch/issues/123456"' in issue
    assert _links(issue, "patterns") == {lin.pattern_id}

    pattern = _page(client, f"/patterns/{lin.pattern_id}")
    assert _links(pattern, "issues") == {lin.issue_id}  # previous
    assert _links(pattern, "candidates") == {lin.candidate_id, *rows.open_candidates.values()}  # next
    relu_row = pattern.split(f'<tr data-id="{lin.candidate_id}">', 1)[1].split("</tr>", 1)[0]
    assert "torch.relu" in relu_row and "1 confirmed, 1 passed" in relu_row

    candidate = _page(client, f"/candidates/{lin.candidate_id}")
    assert _links(candidate, "patterns") == {lin.pattern_id} and _links(candidate, "issues") == {lin.issue_id}
    assert _links(candidate, "harnesses") == {lin.harness_id}
    assert _links(candidate, "findings") == {rows.confirmed, rows.passed}

    harness = _page(client, f"/harnesses/{lin.harness_id}")
    assert _links(harness, "candidates") == {lin.candidate_id}
    assert _links(harness, "patterns") == {lin.pattern_id} and _links(harness, "issues") == {lin.issue_id}
    assert _links(harness, "findings") == {rows.confirmed, rows.passed}


def test_a_candidate_with_a_confirmed_finding_says_so_and_links_it(client: httpx.Client, rows: Rows) -> None:
    page = _page(client, f"/candidates/{rows.lineage.candidate_id}")
    outcome = page.split('id="candidate-outcome">', 1)[1].split("</span></p>", 1)[0]
    assert "no finding yet" not in page
    assert "2 findings" in outcome and f'href="/findings/{rows.confirmed}"' in outcome and "confirmed" in outcome
    body = client.get(f"/api/candidates/{rows.lineage.candidate_id}").json()
    assert body["issue_id"] == rows.lineage.issue_id
    assert [h["id"] for h in body["harness_rows"]] == [rows.lineage.harness_id]
    assert [(f["id"], f["verdict"]) for f in body["harness_rows"][0]["findings"]] == [(rows.confirmed, "confirmed"),
                                                                                      (rows.passed, "passed")]
    # A candidate with a harness still pending, and one with none, have no finding yet, and say which.
    pending = _page(client, f"/candidates/{rows.open_candidates['harnessed']}")
    assert "no finding yet" in pending and len(_links(pending, "harnesses")) == 1 and not _links(pending, "findings")
    none = _page(client, f"/candidates/{rows.open_candidates['checked']}")
    assert 'id="no-harness"' in none


def test_walk_back_from_the_finding_to_the_issue(client: httpx.Client, rows: Rows) -> None:
    lin = rows.lineage
    finding = _page(client, f"/findings/{rows.confirmed}")
    assert _links(finding, "harnesses") == {lin.harness_id}
    assert _links(finding, "candidates") == {lin.candidate_id}
    assert _links(finding, "patterns") == {lin.pattern_id}
    assert _links(finding, "issues") == {lin.issue_id}


def test_a_fuzz_api_harness_says_it_was_made_directly(client: httpx.Client, rows: Rows) -> None:
    harness = _page(client, f"/harnesses/{rows.lineage.direct_harness_id}")
    assert 'id="direct"' in harness and not _links(harness, "candidates") and not _links(harness, "issues")
    assert _links(harness, "findings") == {rows.direct}
    finding = _page(client, f"/findings/{rows.direct}")
    assert _links(finding, "harnesses") == {rows.lineage.direct_harness_id} and not _links(finding, "candidates")


def test_unknown_rows_are_404_pages(client: httpx.Client) -> None:
    for url, what in (("/issues/999999", "issue"), ("/patterns/999999", "pattern"), ("/harnesses/999999", "harness")):
        response = client.get(url)
        assert response.status_code == 404 and f"no {what} with id 999999" in response.text
