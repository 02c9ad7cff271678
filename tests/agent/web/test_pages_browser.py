"""The review page in a real browser: Debian's Chromium driven by Playwright, against a real server.

Playwright never downloads a browser here: it launches the system binary (CHROMIUM). Set
TRANSFUZZ_SCREENSHOT to a .png path to keep a picture of the finding page (the README's).
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from db.models import Finding, Review
from db.store import Store, open_store
from db.queries.campaign import finish_run, save_counters, start_run
from tests.agent.review.rows import add_finding
from tests.agent.web.rows import HOSTILE_REPRO, HOSTILE_TITLE, ReviewRows, populate
from tests.agent.web.chromium import WAIT_MS, browser, browser_marks  # noqa: F401  (browser: a fixture)
from tests.agent.web.server import REVIEWER, RunningServer, review_server

REFRESH_MS = 300  # the campaigns page's refresh interval in these tests (5 s when served for people)

pytestmark = browser_marks
playwright_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Store, ReviewRows, RunningServer]]:
    store = open_store(f"sqlite:///{tmp_path / 'review.db'}")
    with store.session() as session:
        rows = populate(session)
    try:
        with review_server(store, refresh_ms=REFRESH_MS) as server:
            yield store, rows, server
    finally:
        store.close()


def test_keyboard_review_from_queue_to_decision(browser, site) -> None:  # type: ignore[no-untyped-def]
    store, rows, server = site
    page = browser.new_page(viewport={"width": 1200, "height": 1800})
    page.goto(f"{server.base_url}/login?token={server.token}")
    # Sign-in lands on the default queue: unreviewed confirmed + suspicious, the filter kept in the URL.
    assert page.url.endswith("/queue?status=unreviewed&verdict=confirmed&verdict=suspicious")
    # Every row but the passed one is confirmed or suspicious, and none is reviewed yet.
    assert page.inner_text("#count-unreviewed") == str(len(rows.ids) - 1)
    # The confirmed groups come first, then the suspicious ones; the passed finding is not on the default queue.
    leads = page.eval_on_selector_all("#queue tr.lead", "rows => rows.map(r => r.dataset.verdict)")
    assert leads[0] == "confirmed" and leads == sorted(leads, key=["confirmed", "suspicious"].index)
    assert "passed" not in page.eval_on_selector_all("#queue tr[data-id]", "rows => rows.map(r => r.dataset.verdict)")

    page.keyboard.press("/")  # the filters are folded on the default queue; "/" opens them
    page.select_option("#filter-verdict", "confirmed")
    page.fill("#filter-api", "torch.relu")
    page.click("#apply-filters")
    page.wait_for_load_state()  # keys reach review.js only once it has loaded (slow on a busy machine)
    ids = page.eval_on_selector_all("#queue tr[data-id]", "rows => rows.map(r => Number(r.dataset.id))")
    # One root cause: the lead (oldest) first, its duplicate folded under it.
    assert ids == [rows.ids["compile"], rows.ids["compile_dup"]]

    page.keyboard.press("j")
    page.keyboard.press("j")  # the duplicate is folded, so j stays on the lead
    assert page.get_attribute("#queue tr.current", "data-id") == str(rows.ids["compile"])
    page.keyboard.press("f")
    page.keyboard.press("j")
    assert page.get_attribute("#queue tr.current", "data-id") == str(rows.ids["compile_dup"])
    page.keyboard.press("k")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/findings/{rows.ids['compile']}?*")
    assert page.inner_text("#issue-title") == "gelu gives wrong values under torch.compile with NaN inputs"
    assert page.get_attribute("#issue-link", "href") == "https://github.com/pytorch/pytorch/issues/123456"
    page.click("#lineage > summary")  # the lineage is folded below the checks
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
    page.wait_for_load_state()
    assert page.inner_text("#review-status") == "accepted"
    assert f"{REVIEWER} accepted: inductor gets relu wrong" in page.inner_text("#history-list")

    page.keyboard.press("r")
    page.keyboard.press("Enter")  # a rejection without a note is refused, and says why
    assert "needs a note" in page.inner_text("#decide-error")
    page.wait_for_load_state()
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
    page.click("#lineage > summary")  # the lineage is folded below the checks
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


def test_campaign_page_refreshes_without_reloading(browser, site) -> None:  # type: ignore[no-untyped-def]
    store, rows, server = site
    with store.session() as session:
        run_id = start_run(session, "fuzz", {"budget_s": 600})
        harness_id = session.get(Finding, rows.ids["compile"]).harness_id  # type: ignore[union-attr]
    page = browser.new_page()
    page.goto(f"{server.base_url}/campaigns")
    section = f'section[data-run="{run_id}"]'
    assert page.inner_text(f"{section} [data-field=state]") == "running"
    assert page.inner_text(f"{section} [data-field=executions]") == "0"
    page.evaluate("window.__same_page = true")

    with store.session() as session:  # the campaign makes progress while the page is open
        save_counters(session, run_id, {"executions": 4321, "tasks": 7})
        session.get(Finding, add_finding(session, harness_id)).run_id = run_id  # type: ignore[union-attr]
    # expect() polls from the driver: a string predicate would be eval'd, which the page's CSP forbids
    playwright_api.expect(page.locator(f"{section} [data-field=executions]")).to_have_text("4321", timeout=WAIT_MS)
    assert page.inner_text(f"{section} [data-field=tasks_done]") == "7"
    assert page.inner_text(f"{section} [data-field=verdicts]") == "confirmed 1"

    with store.session() as session:
        finish_run(session, run_id, "budget", {"executions": 5000, "tasks": 9})
    playwright_api.expect(page.locator(f"{section} [data-field=state]")).to_have_text("budget", timeout=WAIT_MS)
    assert page.inner_text(f"{section} [data-field=executions]") == "5000"
    assert page.evaluate("window.__same_page") is True  # numbers changed in place, no reload
    page.close()


def test_export_of_the_selection_downloads_the_report_zip(browser, site, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, rows, server = site
    page = browser.new_page(accept_downloads=True)
    page.goto(f"{server.base_url}/login?token={server.token}")  # an export holds saved inputs: signed in only
    page.goto(f"{server.base_url}/queue?api=torch.relu&verdict=confirmed")
    page.keyboard.press("j")
    page.keyboard.press("x")  # select the current row by keyboard
    page.check(f'input[name=id][value="{rows.ids["compile"]}"]')
    page.select_option("select[name=format]", "json")
    with page.expect_download() as download_info:
        page.click("#export-selection")
    download = download_info.value
    assert download.suggested_filename == "transfuzz-export.zip"
    saved = tmp_path / "export.zip"
    download.save_as(saved)
    archive = zipfile.ZipFile(io.BytesIO(saved.read_bytes()))
    (report_name,) = [n for n in archive.namelist() if n.endswith(".json") and not n.endswith("index.json")]
    report = json.loads(archive.read(report_name))
    assert report["api"] == "torch.relu"
    assert [f["id"] for f in report["findings"]] == [rows.ids["compile"], rows.ids["compile_dup"]]
    page.close()
