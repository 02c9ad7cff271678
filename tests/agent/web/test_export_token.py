"""Exports hold saved inputs: the review server hands them out only to a holder of the review token."""

from __future__ import annotations

import io
import zipfile

import httpx

from tests.agent.web.rows import ReviewRows
from tests.agent.web.server import RunningServer


def _query(rows: ReviewRows) -> dict[str, object]:
    return {"id": [rows.ids["compile"]], "format": "json"}


def test_api_export_without_the_token_is_refused(server: RunningServer, rows: ReviewRows) -> None:
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        response = client.get("/api/export", params=_query(rows))
        wrong = client.get("/api/export", params=_query(rows), headers={"Authorization": "Bearer not-the-token-at-all"})
    assert response.status_code == 401 and "review token" in response.json()["detail"]
    assert wrong.status_code == 401 and response.headers["content-type"].startswith("application/json")


def test_api_export_with_the_bearer_token_is_a_zip(server: RunningServer, rows: ReviewRows) -> None:
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        response = client.get("/api/export", params=_query(rows), headers={"Authorization": f"Bearer {server.token}"})
    assert response.status_code == 200, response.text
    assert any(n.endswith(".json") for n in zipfile.ZipFile(io.BytesIO(response.content)).namelist())


def test_page_export_needs_the_sign_in_cookie(server: RunningServer, rows: ReviewRows) -> None:
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        refused = client.get("/export", params=_query(rows))
        assert refused.status_code == 403 and "sign in" in refused.text
        assert not refused.content.startswith(b"PK")
        signed = client.get("/login", params={"token": server.token})
        assert signed.status_code in (200, 303)
        allowed = client.get("/export", params=_query(rows))
    assert allowed.status_code == 200 and allowed.content.startswith(b"PK")
