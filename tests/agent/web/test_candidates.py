"""The candidate queue and page over real HTTP, on SQLite and PostgreSQL: proposed transfers without a finding."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from agent.review.lineage import rationale_parts
from agent.transfer.rank import _rationale
from tests.agent.web.rows import HOSTILE_TITLE, ReviewRows
from tests.agent.web.server import RunningServer


@pytest.fixture
def client(server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        yield c


def test_only_candidates_without_a_finding_are_listed_with_counts(client: httpx.Client, rows: ReviewRows) -> None:
    body = client.get("/api/candidates").json()
    # newest first; the candidates whose harnesses have findings (relu, the hostile tanh) are reviewed as findings
    assert [c["id"] for c in body["items"]] == sorted(rows.candidates.values(), reverse=True)
    assert body["counts"] == {"proposed": 1, "vetoed": 1, "harnessed": 1, "no_harness": 0, "source": 0}
    vetoed = client.get("/api/candidates", params={"status": "vetoed"}).json()
    assert [c["id"] for c in vetoed["items"]] == [rows.candidates["vetoed"]]
    assert vetoed["counts"]["proposed"] == 1  # counts ignore the status filter, as the findings' tabs do
    by_issue = client.get("/api/candidates", params={"issue": "pytorch/pytorch#123456", "api": "torch.tanh"}).json()
    assert [c["id"] for c in by_issue["items"]] == [rows.candidates["checked"]]
    assert client.get("/api/candidates", params={"kind": "JIT_Eager_Mismatch"}).json()["items"] == []
    assert client.get("/api/candidates", params={"status": "done"}).status_code == 400


def test_keyset_paging_visits_each_candidate_once(client: httpx.Client, rows: ReviewRows) -> None:
    seen, cursor = [], None
    while True:
        body = client.get("/api/candidates", params={"limit": 1, **({"cursor": cursor} if cursor else {})}).json()
        seen += [c["id"] for c in body["items"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == sorted(rows.candidates.values(), reverse=True)
    finding_cursor = client.get("/api/findings", params={"limit": 1, "sort": "api"}).json()["next_cursor"]
    refused = client.get("/api/candidates", params={"cursor": finding_cursor})
    assert refused.status_code == 400 and "another list" in refused.json()["detail"]


def test_candidate_page_shows_the_lineage(client: httpx.Client, rows: ReviewRows) -> None:
    body = client.get(f"/api/candidates/{rows.candidates['checked']}").json()
    assert body["source"]["url"] == "https://github.com/pytorch/pytorch/issues/123456"
    assert body["pattern"]["formal"].startswith("Compile_Eager_Mismatch ::=")
    assert (body["matcher"], body["score"]) == ("tfidf", 0.62)
    assert body["check"] == "tanh saturates like gelu, so NaN propagation under inductor applies"
    assert body["trigger_text"] == "float32 inputs with nan"
    page = client.get(f"/candidates/{rows.candidates['checked']}")
    assert page.status_code == 200
    assert "tanh saturates like gelu" in page.text and 'id="matcher">tfidf<' in page.text
    assert "gelu gives wrong values under torch.compile" in page.text
    harnessed = client.get(f"/api/candidates/{rows.candidates['harnessed']}").json()
    assert harnessed["harnesses"] == 1 and harnessed["check"] is None
    assert client.get("/candidates/999999").status_code == 404
    assert client.get("/api/candidates/999999").json() == {"detail": "no candidate with id 999999"}


def test_candidate_queue_page_links_each_row(client: httpx.Client, rows: ReviewRows) -> None:
    page = client.get("/candidates", params={"status": "vetoed"}).text
    assert f'href="/candidates/{rows.candidates["vetoed"]}"' in page and 'id="count-proposed">1<' in page
    assert "embeddings" in page and HOSTILE_TITLE not in page
    assert 'href="/candidates"' in client.get("/queue", follow_redirects=True).text


def test_rationale_parts_read_what_the_ranker_writes() -> None:
    tfidf = _rationale({"text": 0.5}, None, None, "tfidf")  # type: ignore[arg-type]
    embedded = _rationale({"text": 0.5}, None, None, "minilm-embeddings")  # type: ignore[arg-type]
    assert (rationale_parts(tfidf).matcher, rationale_parts(tfidf).check) == ("tfidf", None)
    assert rationale_parts(embedded + "; check: keeps NaN").matcher == "minilm-embeddings"
    assert rationale_parts(embedded + "; check: keeps NaN").check == "keeps NaN"
    source = rationale_parts("the source API: re-check whether the reported bug still reproduces")
    assert source.matcher == "source"
