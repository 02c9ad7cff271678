"""axe-core on every review page, light and dark, in Debian's Chromium (Playwright) on a real server and database.

axe-core is vendored (tests/agent/web/assets/axe.min.js, MPL-2.0, see the README there): nothing is downloaded
while the tests run. It is injected into each page with page.add_script_tag; the pages' Content-Security-Policy
allows only their own scripts, so the test's browser context bypasses CSP (the pages' own rules are tested in
test_api.py and test_security.py). A page passes when axe reports no "serious" or "critical" violation.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from db.models import Candidate, Finding, Harness, Pattern
from db.store import open_store
from tests.agent.web.chromium import (
    FoundResult,
    browser,  # noqa: F401  (a fixture)
    browser_marks,
    lp_pool_found,  # noqa: F401  (a fixture)
    record_found,
)
from tests.agent.web.rows import ReviewRows, populate
from tests.agent.web.server import RunningServer, review_server

pytestmark = browser_marks
pytest.importorskip("playwright.sync_api")

AXE = Path(__file__).resolve().parent / "assets" / "axe.min.js"
BLOCKING = ("serious", "critical")
# axe's rule sets for WCAG 2.x A and AA plus its best practices (landmarks, headings, region).
AXE_RUN = """async () => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa',
                                                                        'wcag22aa', 'best-practice']}});
  return {passes: result.passes.length, violations: result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ': ' + (n.failureSummary || '').replace(/\\s+/g, ' '))}))};
}"""


@pytest.fixture
def site(tmp_path: Path, lp_pool_found: FoundResult) -> Iterator[tuple[ReviewRows, int, RunningServer, dict[str, int]]]:  # noqa: F811
    """The pages on a SQLite database (what they show does not depend on the backend; the finding page's
    browser tests run on PostgreSQL too)."""
    store = open_store(f"sqlite:///{tmp_path / 'review.db'}")
    with store.session() as session:
        rows = populate(session)
        finding_id = record_found(session, lp_pool_found)
        session.get(Finding, rows.ids["direct"]).review_status = "accepted"  # type: ignore[union-attr]
        session.get(Finding, rows.ids["hostile"]).review_status = "rejected"  # type: ignore[union-attr]
        harness = session.get(Harness, session.get(Finding, rows.ids["compile"]).harness_id)  # type: ignore[union-attr]
        pattern = session.get(Candidate, harness.candidate_id).pattern_id  # type: ignore[union-attr]
        issue = session.get(Pattern, pattern).issue_id  # type: ignore[union-attr]
        lineage = {"harness": harness.id, "candidate": harness.candidate_id, "pattern": pattern,  # type: ignore[union-attr]
                   "issue": issue}
    try:
        with review_server(store) as server:
            yield rows, finding_id, server, lineage
    finally:
        store.close()


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """The serious and critical violations axe finds on the page as it is now."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    result = page.evaluate(AXE_RUN)
    assert result["passes"] > 0, "axe ran no rule: was it injected?"
    return [v for v in result["violations"] if v["impact"] in BLOCKING]


def _context(browser: Any, scheme: str, **options: Any) -> Any:  # noqa: F811
    return browser.new_context(bypass_csp=True, color_scheme=scheme, viewport={"width": 1280, "height": 900},
                               **options)


def test_axe_reports_a_known_violation(browser: Any) -> None:  # noqa: F811
    """The check can fail: grey on grey text and an unlabelled field are serious violations to axe."""
    context = _context(browser, "light")
    page = context.new_page()
    page.set_content('<!doctype html><html lang="en"><head><title>x</title></head><body><main>'
                     '<p style="color:#aaa;background:#bbb">hard to read</p><input type="text"></main></body></html>')
    found = {v["id"] for v in axe_violations(page)}
    assert {"color-contrast", "label"} <= found, found
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_violation_on_any_page(browser: Any, site: Any, scheme: str) -> None:  # noqa: F811
    rows, finding_id, server, lineage = site
    problems: dict[str, list[dict[str, Any]]] = {}

    def check(page: Any, label: str) -> None:
        found = axe_violations(page)
        if found:
            problems[label] = found

    signed_in = _context(browser, scheme)
    page = signed_in.new_page()
    page.goto(f"{server.base_url}/login?token={server.token}")
    check(page, "queue (default: what needs a decision)")
    page.locator("button[data-toggle]").first.click()  # a group unfolded
    check(page, "queue, a group unfolded")
    page.keyboard.press("/")  # the filters opened
    check(page, "queue, filters open")
    pages = {
        "queue, every finding": "/queue?status=",
        "queue, accepted": "/queue?status=accepted",
        "queue, nothing matches": "/queue?api=torch.nothing",
        "finding with saved values and a short repro": f"/findings/{finding_id}",
        "finding without saved values": f"/findings/{rows.ids['compile']}",
        "finding from a hostile issue": f"/findings/{rows.ids['hostile']}",
        "candidates": "/candidates",
        "a candidate": f"/candidates/{rows.candidates['checked']}",
        "a candidate with findings": f"/candidates/{lineage['candidate']}",
        "an issue": f"/issues/{lineage['issue']}",
        "a pattern": f"/patterns/{lineage['pattern']}",
        "a harness": f"/harnesses/{lineage['harness']}",
        "export, a rejected finding chosen": f"/export?id={rows.ids['compile']}&id={rows.ids['hostile']}",
        "decisions": "/history",
        "campaigns": "/campaigns",
        "404 page": "/findings/999999",
        "400 page": "/queue?cursor=not-a-cursor",
    }
    for label, path in pages.items():
        response = page.goto(f"{server.base_url}{path}")
        assert response is not None and response.status in (200, 400, 404), (label, response and response.status)
        if label.startswith("export"):  # the page that asks before exporting a rejected finding
            assert page.locator("#rejected-warning").count() == 1
        check(page, label)
    page.goto(f"{server.base_url}/findings/{finding_id}")
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    check(page, "finding with every fold open")
    page.click("#reject-form button[type=submit]")  # an empty rejection: the error in the decision bar
    page.locator("#decide-error").wait_for()
    check(page, "finding with a decision error")
    page.keyboard.press("a")
    page.keyboard.type("overflow")
    page.keyboard.press("Enter")
    page.locator("#decided").wait_for()
    check(page, "finding after a decision")
    signed_in.close()

    signed_out = _context(browser, scheme)
    page = signed_out.new_page()
    for label, path in {"login": "/login", "finding, signed out": f"/findings/{finding_id}",
                        "403 page (export needs the token)": f"/export?id={finding_id}"}.items():
        page.goto(f"{server.base_url}{path}")
        check(page, label)
    page.goto(f"{server.base_url}/login?token=wrong")
    check(page, "login refused")
    signed_out.close()
    assert problems == {}, "\n".join(f"{label}: {v['impact']} {v['id']} ({v['help']}): {v['nodes']}"
                                     for label, found in problems.items() for v in found)


def test_every_page_has_the_favicon_and_no_console_error(browser: Any, site: Any) -> None:  # noqa: F811
    rows, finding_id, server, lineage = site
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    failed: list[str] = []
    page.on("console", lambda message: errors.append(f"{page.url}: {message.text}") if message.type == "error" else None)
    # net::ERR_ABORTED is a load cut short by the next navigation, not a missing file (that is a 404 response)
    page.on("requestfailed", lambda request: failed.append(f"{request.url}: {request.failure}")
            if "ERR_ABORTED" not in (request.failure or "") else None)
    page.on("response", lambda response: failed.append(f"{response.status} {response.url}")
            if response.status >= 400 and response.request.resource_type != "document" else None)
    page.goto(f"{server.base_url}/login?token={server.token}")
    for path in ("/queue?status=", f"/findings/{finding_id}", f"/findings/{rows.ids['compile']}", "/candidates",
                 f"/candidates/{rows.candidates['checked']}", f"/issues/{lineage['issue']}",
                 f"/patterns/{lineage['pattern']}", f"/harnesses/{lineage['harness']}", "/history", "/campaigns",
                 "/login"):
        page.goto(f"{server.base_url}{path}", wait_until="networkidle")  # plots and the icon loaded too
        icon = page.locator("head link[rel=icon]")
        assert icon.count() == 1, path
        answer = context.request.get(f"{server.base_url}{icon.get_attribute('href')}")
        assert answer.status == 200 and answer.headers["content-type"].startswith("image/svg+xml"), path
        assert answer.body().startswith(b"<svg") and b"<script" not in answer.body()
    assert errors == [] and failed == [], (errors, failed)
    context.close()
