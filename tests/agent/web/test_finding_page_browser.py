"""The finding page in Debian's Chromium (Playwright) on a real server and a real database (SQLite and PostgreSQL).

The finding under review is real: a sandboxed worker pool finds float16 lp_pool1d overflowing to inf, minimises
the input and writes the short repro and the saved inputs and outputs (tests/agent/web/chromium.py).

Screenshots: test_screenshots_at_390_and_1440_px writes queue-*.png, finding-*.png and candidates-1440-light.png
(390x844 and 1440x900, light and dark) to $TRANSFUZZ_TEST_ARTIFACTS/finding-page/ when that is set, else to
<pytest tmp_path>/artifacts/ (pytest keeps the last three runs under its basetemp, /tmp/pytest-of-<user>/).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from db.models import Candidate, Finding, Review
from db.store import Store
from fuzz_core.saved_inputs import load_inputs
from fuzz_core.saved_outputs import load_outputs
from tests.agent.web.chromium import (
    FoundResult,
    artifacts_dir,
    browser,  # noqa: F401  (a fixture)
    browser_marks,
    in_viewport,
    lp_pool_found,  # noqa: F401  (a fixture)
    record_found,
)
from tests.agent.web.rows import ReviewRows, populate
from tests.agent.web.server import REVIEWER, RunningServer, review_server

pytestmark = browser_marks
pytest.importorskip("playwright.sync_api")

WIDE = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
LONG_API = "torch.nn.functional.scaled_dot_product_attention_with_an_unusually_long_name_for_the_layout"


@pytest.fixture
def site(store: Store, lp_pool_found: FoundResult) -> Iterator[tuple[Store, ReviewRows, int, RunningServer]]:  # noqa: F811
    with store.session() as session:
        rows = populate(session)
        finding_id = record_found(session, lp_pool_found)
        pattern_id = session.get(Candidate, rows.candidates["checked"]).pattern_id  # type: ignore[union-attr]
        session.add(Candidate(pattern_id=pattern_id, target_api=LONG_API, score=0.5, status="proposed",
                              rationale="semantic text similarity 0.5"))
    with review_server(store) as server:
        yield store, rows, finding_id, server


def _signed_in_page(browser: Any, server: RunningServer, **options: Any) -> Any:  # noqa: F811
    context = browser.new_context(**options)
    page = context.new_page()
    page.goto(f"{server.base_url}/login?token={server.token}")
    return page


def _expected_input(found: FoundResult) -> list[str]:
    """The minimised input's first tensor, element by element, as the page prints numbers (6 significant digits)."""
    saved = load_inputs(found.evidence["minimised"]["inputs_path"])
    tensor = saved["args"][0]
    return [f"{v:.6g}" for v in tensor.reshape(-1).double().tolist()]


def _expected_worst(found: FoundResult) -> tuple[str, str, str]:
    """Reference, test and float64 at the element where float16 overflowed (read from the saved outputs file)."""
    saved = load_outputs(found.evidence["outputs_path"])
    test = saved["test"].reshape(-1).double()
    (where,) = [i for i, v in enumerate(test.tolist()) if math.isinf(v)]
    ref, fp64 = saved["reference"].reshape(-1).double()[where].item(), saved["fp64"].reshape(-1)[where].item()
    return f"{ref:.6g}", "Inf" if test[where] > 0 else "-Inf", f"{fp64:.6g}"


def test_the_first_screen_at_1440_shows_input_values_short_repro_and_decision_bar(
        browser: Any, site: Any, lp_pool_found: FoundResult) -> None:  # noqa: F811
    store, _, finding_id, server = site
    page = _signed_in_page(browser, server, viewport=WIDE, permissions=["clipboard-read", "clipboard-write"])
    page.goto(f"{server.base_url}/findings/{finding_id}")
    assert page.evaluate("window.scrollY") == 0
    on_screen = ["#verdict-sentence", "#input-table", "#values-table", "#repro-section", "#decide", "#accept-form",
                 "#reject-form"]
    for selector in on_screen:
        box = page.locator(selector).bounding_box()
        assert in_viewport(box, WIDE["width"], WIDE["height"]), f"{selector} is not wholly on the first screen: {box}"

    reference, test, fp64 = _expected_worst(lp_pool_found)
    sentence = page.inner_text("#verdict-sentence")
    assert sentence.startswith("Confirmed bug: torch.nn.functional.lp_pool1d under dtype:float16 gives Inf")
    assert f"where eager gives {reference} and float64 gives {fp64}" in sentence

    input_row = page.locator("#input-table tbody tr").first
    assert input_row.locator("th").inner_text() == "arg0"
    assert input_row.locator("td.vals").inner_text() == ", ".join(_expected_input(lp_pool_found))
    assert "minimised" in page.inner_text("#input-title")

    headers = page.locator("#values-table thead th").all_inner_texts()
    assert headers[1:4] == ["eager", "dtype:float16", "float64"]
    cells = page.locator("#values-table tbody tr").first.locator("td").all_inner_texts()
    assert cells[:3] == [reference, test, fp64]
    assert "bad" in (page.locator("#values-table tbody tr td").nth(1).get_attribute("class") or "")

    short = lp_pool_found.evidence["minimised"]["short_repro"]
    assert page.locator("#short-repro-text").text_content() == short
    assert page.locator("#short-repro").is_visible()  # the highlighted copy is what shows
    assert not page.locator("#repro-text").is_visible()  # the full script is folded below
    page.keyboard.press("c")  # the copy key copies the short repro, exactly
    page.locator("#copy-status").filter(has_text="copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == short

    for folded in ("#full-script", "#raw-evidence", "#lineage"):
        assert page.locator(folded).evaluate("d => d.tagName === 'DETAILS' && !d.open"), f"{folded} is not folded"
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.context.close()


def test_the_plot_draws_the_infinite_error_on_the_top_band(browser: Any, site: Any) -> None:  # noqa: F811
    _, _, finding_id, server = site
    page = browser.new_page(viewport=WIDE)
    page.goto(f"{server.base_url}/findings/{finding_id}")
    page.locator("#error-plot").scroll_into_view_if_needed()
    page.wait_for_function("document.getElementById('error-plot').complete")
    assert page.eval_on_selector("#error-plot", "img => img.naturalWidth") > 0
    assert "top band" in page.inner_text("#plot-caption")

    page.goto(f"{server.base_url}{page.get_attribute('#error-plot', 'src')}")  # the SVG itself, drawn by Chromium
    band = page.locator("#nonfinite-band").bounding_box()
    marker = page.locator("#nonfinite-test").bounding_box()
    finite = [page.locator("[id=finite-reference]").nth(i).bounding_box()
              for i in range(page.locator("[id=finite-reference]").count())]
    assert band is not None and marker is not None and finite, (band, marker, finite)
    centre = marker["y"] + marker["height"] / 2
    assert band["y"] <= centre <= band["y"] + band["height"], "the inf marker is not on the NaN/Inf band"
    # screen y grows downwards: the band and the inf marker sit above every finite error
    assert all(band["y"] + band["height"] <= bar["y"] + 0.5 for bar in finite if bar is not None), (band, finite)
    assert page.locator("#nonfinite-reference").count() == 0  # eager's value is finite: no marker for it
    page.close()


def test_the_decision_bar_stays_on_screen_while_scrolling(browser: Any, site: Any) -> None:  # noqa: F811
    store, _, finding_id, server = site
    page = _signed_in_page(browser, server, viewport=WIDE)
    page.goto(f"{server.base_url}/findings/{finding_id}")
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height > 2 * WIDE["height"], f"the page is {height} px high: too short to test scrolling"
    for where in (height // 2, height):
        page.evaluate(f"window.scrollTo(0, {where})")
        box = page.locator("#decide").bounding_box()
        assert in_viewport(box, WIDE["width"], WIDE["height"]), f"decision bar off screen at scrollY {where}: {box}"
        assert page.locator("#accept-form button").is_visible()
    page.evaluate(f"window.scrollTo(0, {height // 2})")
    box = page.locator("#decide").bounding_box()
    assert box is not None and abs(box["y"] + box["height"] - WIDE["height"]) <= 1, "not stuck to the bottom edge"

    page.keyboard.press("a")  # keyboard review works from the middle of the page
    page.keyboard.type("float16 overflows in x**4")
    page.keyboard.press("Enter")
    page.wait_for_selector("#decided")
    assert in_viewport(page.locator("#decided").bounding_box(), WIDE["width"], WIDE["height"])
    with store.session() as session:
        reviews = session.scalars(select(Review).where(Review.finding_id == finding_id)).all()
        assert [(r.decision, r.note, r.reviewer) for r in reviews] == [("accepted", "float16 overflows in x**4", REVIEWER)]
    page.context.close()


def test_without_javascript_decisions_post_and_errors_show_in_the_bar(browser: Any, site: Any) -> None:  # noqa: F811
    store, _, finding_id, server = site
    context = browser.new_context(viewport=WIDE, java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{server.base_url}/login")
    page.fill("input[name=token]", server.token)
    page.click("form[action='/login'] button[type=submit]")
    page.wait_for_url("**/queue?*")
    page.goto(f"{server.base_url}/findings/{finding_id}")
    page.mouse.wheel(0, 1500)  # a reviewer who scrolled down to the checks
    page.click("#reject-form button[type=submit]")  # reject with an empty note: refused
    error = page.locator("#decide-error")
    assert "needs a note" in error.inner_text()
    error_box, bar_box = error.bounding_box(), page.locator("#decide").bounding_box()
    assert in_viewport(error_box, WIDE["width"], WIDE["height"]), f"the error is off screen: {error_box}"
    assert bar_box is not None and error_box is not None
    assert bar_box["y"] <= error_box["y"] and error_box["y"] + error_box["height"] <= bar_box["y"] + bar_box["height"]
    assert page.get_attribute("#note-reject", "aria-invalid") == "true"

    page.fill("#note-reject", "not a bug: x**4 overflows float16 by definition")
    page.click("#reject-form button[type=submit]")
    page.wait_for_selector("#decided")
    assert page.inner_text("#review-status") == "rejected"
    with store.session() as session:
        assert session.get(Finding, finding_id).review_status == "rejected"  # type: ignore[union-attr]
        reviews = session.scalars(select(Review).where(Review.finding_id == finding_id)).all()
        assert [r.note for r in reviews] == ["not a bug: x**4 overflows float16 by definition"]
    context.close()


def _no_page_overflow(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_screenshots_at_390_and_1440_px(browser: Any, site: Any, tmp_path: Path) -> None:  # noqa: F811
    """Queue and finding pages at 390x844 and 1440x900, light and dark, saved for review (see the module doc)."""
    _, rows, finding_id, server = site
    out = artifacts_dir(tmp_path, "finding-page")
    for size, label in ((PHONE, "390"), (WIDE, "1440")):
        for scheme in ("light", "dark"):
            page = _signed_in_page(browser, server, viewport=size, color_scheme=scheme)
            page.goto(f"{server.base_url}/queue")
            assert _no_page_overflow(page), f"the queue scrolls sideways at {label} px"
            wrap = page.locator(".table-wrap:has(#queue)").bounding_box()
            assert wrap is not None and wrap["x"] >= 0 and wrap["x"] + wrap["width"] <= size["width"] + 0.5
            for row in page.locator("#queue tr.lead").all():  # id, verdict, API, group of every lead on screen
                for cell in (row.locator("td").nth(1), row.locator(".verdict"), row.locator("td.api"),
                             row.locator("td.grp")):
                    box = cell.bounding_box()
                    assert box is not None and box["x"] + box["width"] <= size["width"] + 0.5, (label, box)
            page.screenshot(path=str(out / f"queue-{label}-{scheme}.png"))

            page.goto(f"{server.base_url}/findings/{finding_id}")
            assert _no_page_overflow(page), f"the finding page scrolls sideways at {label} px"
            assert in_viewport(page.locator("#decide").bounding_box(), size["width"], size["height"])
            page.screenshot(path=str(out / f"finding-{label}-{scheme}.png"))
            page.screenshot(path=str(out / f"finding-{label}-{scheme}-full.png"), full_page=True)
            page.context.close()

    page = _signed_in_page(browser, server, viewport=WIDE)
    page.goto(f"{server.base_url}/candidates")
    assert LONG_API in page.inner_text("#queue")
    assert _no_page_overflow(page), "the candidates table overflows the page at 1440 px"
    table = page.locator("#queue").bounding_box()
    assert table is not None and table["x"] + table["width"] <= WIDE["width"], table
    page.screenshot(path=str(out / "candidates-1440-light.png"))
    page.context.close()
    shots = sorted(p.name for p in out.glob("*.png"))
    assert len(shots) == 13 and all((out / name).stat().st_size > 5_000 for name in shots), shots
    assert rows.ids  # the populated findings were in the queue the screenshots show
