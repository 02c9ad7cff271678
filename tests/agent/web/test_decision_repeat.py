"""Re-submitting a finding's last decision says so and stores nothing, on the page and in the API (real HTTP, both DBs)."""

from __future__ import annotations


import httpx
from sqlalchemy import select

from db.models import Finding, Review
from db.store import Store
from tests.agent.web.rows import ReviewRows
from tests.agent.web.server import REVIEWER, RunningServer


def _decisions(store: Store, finding_id: int) -> list[tuple[str, str]]:
    with store.session() as session:
        return [(r.decision, r.note) for r in session.scalars(select(Review).where(Review.finding_id == finding_id)
                                                               .order_by(Review.id))]


def test_api_repeat_is_409_and_stores_nothing(server: RunningServer, rows: ReviewRows, store: Store) -> None:
    finding = rows.ids["compile"]
    auth = {"Authorization": f"Bearer {server.token}"}
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        first = client.post(f"/api/findings/{finding}/decision", json={"decision": "accepted", "note": "real"}, headers=auth)
        assert first.status_code == 201, first.text
        again = client.post(f"/api/findings/{finding}/decision", json={"decision": "accepted"}, headers=auth)
        assert again.status_code == 409
        detail = again.json()["detail"]
        assert f"finding {finding} is already accepted" in detail and REVIEWER in detail
        assert "(real)" in detail and "nothing recorded" in detail
        assert _decisions(store, finding) == [("accepted", "real")]
        # A different decision is no repeat: it is stored, and then repeating *it* is refused.
        changed = client.post(f"/api/findings/{finding}/decision", json={"decision": "rejected", "note": "noise"},
                              headers=auth)
        assert changed.status_code == 201, changed.text
        assert client.post(f"/api/findings/{finding}/decision", json={"decision": "rejected", "note": "still noise"},
                           headers=auth).status_code == 409
        back = client.post(f"/api/findings/{finding}/decision", json={"decision": "accepted"}, headers=auth)
        assert back.status_code == 201
    assert _decisions(store, finding) == [("accepted", "real"), ("rejected", "noise"), ("accepted", "")]
    with store.session() as session:
        assert session.get(Finding, finding).review_status == "accepted"  # type: ignore[union-attr]


def test_page_repeat_says_so_where_the_decision_is(server: RunningServer, rows: ReviewRows, store: Store) -> None:
    finding = rows.ids["direct"]
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        client.cookies = client.get("/login", params={"token": server.token}, follow_redirects=False).cookies
        page = client.get(f"/findings/{finding}").text
        csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        form = {"decision": "rejected", "note": "float noise", "csrf": csrf}
        first = client.post(f"/findings/{finding}/decide", data=form, headers={"Origin": server.base_url},
                            follow_redirects=False)
        assert first.status_code == 303
        again = client.post(f"/findings/{finding}/decide", data=form, headers={"Origin": server.base_url},
                            follow_redirects=False)
    assert again.status_code == 409
    alert = again.text.split('id="decide-error">', 1)[1].split("</p>", 1)[0]
    assert f"finding {finding} is already rejected" in alert and "nothing recorded" in alert
    assert _decisions(store, finding) == [("rejected", "float noise")]
