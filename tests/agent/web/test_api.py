"""The review JSON API and the page forms over real HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import select

from db.models import Review
from db.store import Store
from tests.agent.web.rows import HOSTILE_TITLE, ReviewRows
from tests.agent.web.server import REVIEWER, RunningServer


@pytest.fixture
def client(server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        yield c


def _walk(client: httpx.Client, **params: object) -> list[int]:
    seen: list[int] = []
    cursor = None
    while True:
        query = {**params, "limit": 2, **({"cursor": cursor} if cursor else {})}
        page = client.get("/api/findings", params=query)
        assert page.status_code == 200, page.text
        body = page.json()
        seen += [item["id"] for item in body["items"]]
        cursor = body["next_cursor"]
        if cursor is None:
            return seen


def test_keyset_paging_visits_every_finding_once_in_each_sort(client: httpx.Client, rows: ReviewRows) -> None:
    ids = sorted(rows.ids.values())
    assert _walk(client, sort="newest") == ids[::-1]
    assert _walk(client, sort="oldest") == ids
    by_api = _walk(client, sort="api")
    assert sorted(by_api) == ids and len(set(by_api)) == len(ids)
    apis = [client.get(f"/api/findings/{i}").json()["finding"]["target_api"] for i in by_api]
    assert apis == sorted(apis)


def test_filters_and_counts(client: httpx.Client, rows: ReviewRows) -> None:
    body = client.get("/api/findings", params={"verdict": "confirmed", "api": "torch.relu"}).json()
    assert [i["id"] for i in body["items"]] == [rows.ids["compile_dup"], rows.ids["compile"]]
    assert body["counts"] == {"unreviewed": 2, "accepted": 0, "rejected": 0}
    by_issue = client.get("/api/findings", params={"issue": "pytorch/pytorch#123456", "verdict": "passed"}).json()
    assert [i["id"] for i in by_issue["items"]] == [rows.ids["passed"]]
    by_run = client.get("/api/findings", params={"run": rows.run_id, "sort": "oldest"}).json()
    assert [i["id"] for i in by_run["items"]] == [rows.ids["compile"], rows.ids["passed"]]
    by_modes = client.get("/api/findings", params={"reference_mode": "eager", "test_mode": "jit.trace"}).json()
    assert [i["id"] for i in by_modes["items"]] == [rows.ids["direct"]]
    by_kind = client.get("/api/findings", params={"kind": "JIT_Eager_Mismatch"}).json()
    assert [i["id"] for i in by_kind["items"]] == [rows.ids["direct"]]


@pytest.mark.parametrize(
    "params, message",
    [
        ({"status": "done"}, "unknown review status 'done'"),
        ({"issue": "pytorch#1"}, "owner/repo#123"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"run": "x"}, "campaign id"),
    ],
)
def test_bad_queue_input_is_a_400_with_a_reason(client: httpx.Client, params: dict[str, str], message: str) -> None:
    response = client.get("/api/findings", params=params)
    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_finding_shows_lineage_checks_duplicates_and_a_plot(client: httpx.Client, rows: ReviewRows) -> None:
    body = client.get(f"/api/findings/{rows.ids['compile']}").json()
    assert body["source_issue_url"] == "https://github.com/pytorch/pytorch/issues/123456"
    assert body["finding"]["pattern"]["formal"].startswith("Compile_Eager_Mismatch ::=")
    assert body["finding"]["candidate"]["rationale"] == "elementwise activation like gelu"
    assert [d["id"] for d in body["duplicates"]] == [rows.ids["compile_dup"]]
    # stored without recorded checks: the table says so rather than inventing five passes
    assert [(c["status"], c["detail"]) for c in body["checks"]] == [
        ("not recorded", "checks not recorded (stored by an older version)")]
    assert body["harness_spec"]["api"] == "torch.relu"
    plot = client.get(body["plot_url"])
    assert plot.status_code == 200 and plot.headers["content-type"] == "image/svg+xml"
    assert plot.content.lstrip().startswith(b"<?xml") and b"<svg" in plot.content
    assert client.get("/api/findings/999999").status_code == 404


def test_a_stored_issue_url_is_never_used_as_the_link(client: httpx.Client, rows: ReviewRows) -> None:
    body = client.get(f"/api/findings/{rows.ids['hostile']}").json()
    assert body["finding"]["source"]["title"] == HOSTILE_TITLE
    assert body["source_issue_url"] == "https://github.com/evil/repo/issues/7"


def test_a_decision_needs_the_token_and_lands_in_the_history(client: httpx.Client, store: Store, rows: ReviewRows,
                                                              server: RunningServer) -> None:
    url = f"/api/findings/{rows.ids['compile']}/decision"
    assert client.post(url, json={"decision": "accepted"}).status_code == 401
    assert client.post(url, json={"decision": "accepted"}, headers={"Authorization": "Bearer wrong-token-xxxxxxxx"}).status_code == 401
    auth = {"Authorization": f"Bearer {server.token}"}
    refused = client.post(url, json={"decision": "rejected"}, headers=auth)
    assert refused.status_code == 400 and "needs a note" in refused.json()["detail"]
    stored = client.post(url, json={"decision": "accepted", "note": "real inductor bug"}, headers=auth)
    assert stored.status_code == 201, stored.text
    assert stored.json()["reviewer"] == REVIEWER
    with store.session() as session:
        reviews = session.scalars(select(Review)).all()
        assert [(r.finding_id, r.decision, r.note, r.reviewer) for r in reviews] == [
            (rows.ids["compile"], "accepted", "real inductor bug", REVIEWER)
        ]
    history = client.get("/api/reviews").json()
    assert [(r["finding_id"], r["decision"]) for r in history["reviews"]] == [(rows.ids["compile"], "accepted")]
    counts = client.get("/api/findings").json()["counts"]
    assert counts["accepted"] == 1


def test_export_of_a_selection_is_the_report_format_zipped(client: httpx.Client, server: RunningServer,
                                                           rows: ReviewRows) -> None:
    response = client.get("/api/export", params={"id": [rows.ids["compile"], rows.ids["compile_dup"]], "format": "json"},
                          headers={"Authorization": f"Bearer {server.token}"})
    assert response.status_code == 200, response.text
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = archive.namelist()
    reports = [n for n in names if n.endswith(".json") and not n.endswith("index.json")]
    assert len(reports) == 1  # one signature group
    import json

    report = json.loads(archive.read(reports[0]))
    assert report["api"] == "torch.relu"
    assert [f["id"] for f in report["findings"]] == [rows.ids["compile"], rows.ids["compile_dup"]]
    assert client.get("/api/export", headers={"Authorization": f"Bearer {server.token}"}).status_code == 400


def test_campaign_progress(client: httpx.Client, rows: ReviewRows) -> None:
    body = client.get("/api/campaigns").json()
    (run,) = body["campaigns"]
    assert run["id"] == rows.run_id and run["running"] is False
    assert run["executions"] == 1200 and run["tasks_done"] == 3
    assert run["verdicts"] == {"confirmed": 1, "passed": 1}
    assert client.get(f"/campaigns/{rows.run_id}/verdicts.svg").headers["content-type"] == "image/svg+xml"


def test_the_server_refuses_foreign_host_names(client: httpx.Client) -> None:
    # DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends its own Host header.
    assert client.get("/api/findings", headers={"Host": "evil.example"}).status_code == 400


def test_page_forms_need_cookie_csrf_and_same_origin(client: httpx.Client, rows: ReviewRows, server: RunningServer,
                                                     store: Store) -> None:
    url = f"/findings/{rows.ids['compile']}/decide"
    form = {"decision": "accepted", "note": "x"}
    assert client.post(url, data=form).status_code == 403  # not signed in
    signed = client.get("/login", params={"token": server.token}, follow_redirects=False)
    assert signed.status_code == 303
    client.cookies = signed.cookies
    page = client.get(f"/findings/{rows.ids['compile']}").text
    csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    assert client.post(url, data=form).status_code == 403  # no CSRF field
    foreign = client.post(url, data={**form, "csrf": csrf}, headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403
    with store.session() as session:
        assert session.scalars(select(Review)).all() == []
    ok = client.post(url, data={**form, "csrf": csrf}, headers={"Origin": server.base_url},
                     follow_redirects=False)
    assert ok.status_code == 303
    with store.session() as session:
        assert [r.decision for r in session.scalars(select(Review))] == ["accepted"]


def test_every_response_carries_a_script_policy(client: httpx.Client) -> None:
    policy = client.get("/queue").headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy


def test_errors_are_pages_for_pages_and_json_for_the_api(client: httpx.Client) -> None:
    missing = client.get("/findings/999999")
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/html")
    assert "404 · Not Found" in missing.text and "no finding with id 999999" in missing.text
    assert 'href="/queue"' in missing.text  # the site's layout, with a way back
    unknown = client.get("/no/such/page")
    assert unknown.status_code == 404 and unknown.headers["content-type"].startswith("text/html")
    bad_cursor = client.get("/queue", params={"cursor": "<script>x</script>"})
    assert bad_cursor.status_code == 400 and "start from the first page" in bad_cursor.text
    bad_id = client.get("/findings/not-a-number")
    assert bad_id.status_code == 400 and bad_id.headers["content-type"].startswith("text/html")
    hostile = client.get("/queue", params={"sort": "<b>x</b>"})
    assert hostile.status_code == 400 and "<b>x</b>" not in hostile.text and "&lt;b&gt;x&lt;/b&gt;" in hostile.text
    api_missing = client.get("/api/findings/999999")
    assert api_missing.status_code == 404 and api_missing.json() == {"detail": "no finding with id 999999"}
    assert client.get("/api/no-such-route").json() == {"detail": "Not Found"}
    assert client.get("/api/findings/not-a-number").status_code == 422  # FastAPI's documented validation body


def test_a_finding_that_did_not_fail_shows_no_group_label_in_the_queue(client: httpx.Client, rows: ReviewRows) -> None:
    page = client.get("/queue", params={"status": "", "verdict": "passed"}).text
    row = page[page.index(f'data-id="{rows.ids["passed"]}"'):]
    cell = row[row.index('class="grp"'):row.index("</td>", row.index('class="grp"'))]
    assert f"g{rows.ids['passed']}" not in cell and ">-<" in cell
    failing = client.get("/queue", params={"status": "", "verdict": "confirmed"}).text
    assert f">g{rows.ids['compile']}<" in failing
