"""The review page in a real browser: Debian's Chromium driven by Playwright, against a real server.

Playwright never downloads a browser here: it launches the system binary (CHROMIUM). Set
TRANSFUZZ_SCREENSHOT to a .png path to keep a picture of the finding page (the README's).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from db.models import Finding, Review
from db.store import Store, open_store
from tests.agent.web.rows import HOSTILE_REPRO, HOSTILE_TITLE, ReviewRows, populate
from tests.agent.web.server import REVIEWER, RunningServer, review_server

CHROMIUM = os.environ.get("TRANSFUZZ_CHROMIUM", "/usr/bin/chromium")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)"),
]
playwright_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_api.sync_playwright() as driver:
        # --no-sandbox: CI runs as root, where Chromium refuses its own sandbox.
        launched = driver.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Store, ReviewRows, RunningServer]]:
    store = open_store(f"sqlite:///{tmp_path / 'review.db'}")
    with store.session() as session:
        rows = populate(session)
    try:
        with review_server(store) as server:
            yield store, rows, server
    finally:
        store.close()


def test_keyboard_review_from_queue_to_decision(browser, site) -> None:  # type: ignore[no-untyped-def]
    store, rows, server = site
    page = browser.new_page(viewport={"width": 1200, "height": 1800})
    page.goto(f"{server.base_url}/login?token={server.token}")
    assert page.url.endswith("/queue")
    assert page.inner_text("#count-unreviewed") == str(len(rows.ids))

    page.select_option("#filter-verdict", "confirmed")
    page.fill("#filter-api", "torch.relu")
    page.click("#apply-filters")
    ids = page.eval_on_selector_all("#queue tr[data-id]", "rows => rows.map(r => Number(r.dataset.id))")
    assert ids == [rows.ids["compile_dup"], rows.ids["compile"]]

    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/findings/{rows.ids['compile']}?*")
    assert page.inner_text("#issue-title") == "gelu gives wrong values under torch.compile with NaN inputs"
    assert page.get_attribute("#issue-link", "href") == "https://github.com/pytorch/pytorch/issues/123456"
    assert "Compile_Eager_Mismatch ::=" in page.inner_text("#formal")
    page.wait_for_function("document.getElementById('error-plot').complete")
    assert page.eval_on_selector("#error-plot", "img => img.naturalWidth") > 0
    assert "inductor" in page.inner_text("#backend-ablation")
    if os.environ.get("TRANSFUZZ_SCREENSHOT"):
        page.screenshot(path=os.environ["TRANSFUZZ_SCREENSHOT"], full_page=True)

    page.keyboard.press("a")
    page.keyboard.type("inductor gets relu wrong")
    page.keyboard.press("Enter")
    page.wait_for_selector("#decided")
    assert page.inner_text("#review-status") == "accepted"
    assert f"{REVIEWER} accepted: inductor gets relu wrong" in page.inner_text("#history-list")

    page.keyboard.press("r")
    page.keyboard.press("Enter")  # a rejection without a note is refused, and says why
    assert "needs a note" in page.inner_text("#decide-error")
    page.keyboard.press("r")
    page.keyboard.type("same bug as #1; fixed upstream")
    page.keyboard.press("Enter")
    page.wait_for_selector("#decided")
    history = page.inner_text("#history-list")
    assert history.index("accepted") < history.index("rejected: same bug as #1")

    with store.session() as session:
        decisions = [(r.decision, r.note, r.reviewer) for r in session.scalars(select(Review).order_by(Review.id))]
        assert decisions == [
            ("accepted", "inductor gets relu wrong", REVIEWER),
            ("rejected", "same bug as #1; fixed upstream", REVIEWER),
        ]
        assert session.get(Finding, rows.ids["compile"]).review_status == "rejected"  # type: ignore[union-attr]
    page.close()


def test_hostile_issue_text_is_shown_as_text(browser, site) -> None:  # type: ignore[no-untyped-def]
    _, rows, server = site
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{server.base_url}/findings/{rows.ids['hostile']}")
    assert page.inner_text("#issue-title") == HOSTILE_TITLE
    assert page.get_attribute("#issue-link", "href") == "https://github.com/evil/repo/issues/7"
    assert page.locator("#rationale a").count() == 0 and "javascript:alert(1)" in page.inner_text("#rationale")
    assert page.inner_text("#formal") == "<b>not bold</b>"
    assert page.locator("#repro-text").text_content() == HOSTILE_REPRO
    page.click("#copy-repro")  # the copy button is wired (its result depends on clipboard permission)
    page.wait_for_function("document.getElementById('copy-status').textContent !== ''")
    page.goto(f"{server.base_url}/queue")
    assert HOSTILE_TITLE not in page.content()  # the queue shows refs, not titles; nothing leaks unescaped
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
    page.close()
