"""/api/docs renders the API's operations in Chromium with every request off this server refused (Note [Offline API docs])."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from db.store import Store, open_store
from tests.agent.web.rows import populate
from tests.agent.web.chromium import browser, browser_marks  # noqa: F401  (browser: a fixture)
from tests.agent.web.server import RunningServer, review_server

pytestmark = browser_marks
playwright_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    store: Store = open_store(f"sqlite:///{tmp_path / 'review.db'}")
    with store.session() as session:
        populate(session)
    try:
        with review_server(store) as running:
            yield running
    finally:
        store.close()


def test_api_docs_render_operations_without_network(browser, server) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context()
    refused: list[str] = []
    asked: list[str] = []

    def only_loopback(route) -> None:  # type: ignore[no-untyped-def]
        url = route.request.url
        asked.append(url)
        if urlsplit(url).hostname == "127.0.0.1" or url.startswith("data:"):
            route.continue_()
        else:
            refused.append(url)
            route.abort()

    context.route("**/*", only_loopback)
    page = context.new_page()
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text) if message.type == "error" else None)
    response = page.goto(f"{server.base_url}/api/docs")
    assert response is not None and response.status == 200
    # Swagger UI drew one block per operation of the JSON API, from our own schema.
    page.wait_for_selector(".opblock")
    paths = page.eval_on_selector_all(".opblock .opblock-summary-path", "els => els.map(e => e.getAttribute('data-path'))")
    assert "/api/findings" in paths
    assert "/api/findings/{finding_id}/decision" in paths
    assert "/api/export" in paths
    assert page.inner_text(".info .title").startswith("TransFuzz review")
    # Everything came from this server: the bundle, its stylesheet, the favicon and the schema.
    assert refused == []
    assert any(url.endswith("/api/docs/assets/swagger-ui-bundle.js") for url in asked)
    assert any(url.endswith("/api/openapi.json") for url in asked)
    # The page's own policy let its inline start-up script run (by hash) and refused nothing else.
    assert not [m for m in console_errors if "Content Security Policy" in m], console_errors
    policy = response.headers["content-security-policy"]
    assert "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";", 1)[0]
    context.close()


def test_api_docs_assets_are_served_by_the_review_server(server) -> None:  # type: ignore[no-untyped-def]
    import httpx

    html = httpx.get(f"{server.base_url}/api/docs").text
    assert "cdn" not in html.lower() and "https://" not in html
    script = httpx.get(f"{server.base_url}/api/docs/assets/swagger-ui-bundle.js")
    assert script.status_code == 200 and "SwaggerUIBundle" in script.text
    assert httpx.get(f"{server.base_url}/api/docs/assets/swagger-ui.css").status_code == 200
