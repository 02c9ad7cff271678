"""Shared parts of the review page's browser tests: Debian's Chromium under Playwright, and a real finding.

Playwright never downloads a browser here: it launches the system binary (CHROMIUM, /usr/bin/chromium unless
TRANSFUZZ_CHROMIUM says otherwise). The real finding is found the way the fuzz stage finds one: a sandboxed
WorkerPool runs float16 lp_pool1d (tests/agent/web/test_finding_plot.py says why it overflows to inf), minimises
the input and writes the short repro, the saved inputs and the saved outputs; tests record it in their database.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session

from db.models import Harness
from db.queries.campaign import claim, record_result, start_run
from fuzz_core import WorkerPool
from tests.agent.web.test_finding_plot import LP_POOL_FP16

CHROMIUM = os.environ.get("TRANSFUZZ_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS_ENV = "TRANSFUZZ_TEST_ARTIFACTS"

browser_marks = [
    pytest.mark.browser,
    pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)"),
]


def launch(driver: Any) -> Any:
    # --no-sandbox: CI runs as root, where Chromium refuses its own sandbox.
    return driver.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])


@dataclass
class FoundResult:
    """What the worker pool returned for the lp_pool1d harness (files under the module's temporary folder)."""

    verdict: str
    reason: str
    evidence: dict[str, Any]
    repro: str
    signature: str


def find_lp_pool_finding(workdir: Path) -> FoundResult:
    with WorkerPool(1, task_timeout_s=180, workdir=workdir, minimise_s=30, preload_opinfo=False) as pool:
        result = pool.submit(LP_POOL_FP16, budget_s=20).result()
    assert result.verdict == "confirmed", result.reason
    minimised = result.evidence.get("minimised") or {}
    assert minimised.get("short_repro"), "the pool wrote no short repro for the minimised input"
    return FoundResult(result.verdict, result.reason, result.evidence, result.repro, result.signature)


def record_found(session: Session, found: FoundResult) -> int:
    """Store the pool's result as the fuzz stage does (claim the harness in a campaign, record the verdict)."""
    run_id = start_run(session, "fuzz", {"budget_s": 30})
    harness = Harness(spec=LP_POOL_FP16.to_dict(), status="pending")
    session.add(harness)
    session.flush()
    assert claim(session, harness.id, run_id)
    finding_id = record_result(session, harness.id, run_id, verdict=found.verdict, reason=found.reason,
                               evidence=found.evidence, repro=found.repro, signature=found.signature)
    assert finding_id is not None
    return finding_id


def artifacts_dir(tmp_path: Path, name: str) -> Path:
    """Where tests leave screenshots for people to look at: $TRANSFUZZ_TEST_ARTIFACTS/<name> when set, else
    <tmp_path>/artifacts (pytest keeps the last three runs' tmp_path under its basetemp)."""
    root = os.environ.get(ARTIFACTS_ENV)
    folder = Path(root) / name if root else tmp_path / "artifacts"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def in_viewport(box: dict[str, float] | None, width: int, height: int) -> bool:
    """Whether a bounding box (page.locator(...).bounding_box(), viewport coordinates) lies wholly on screen."""
    return (box is not None and box["width"] > 0 and box["height"] > 0 and box["x"] >= 0 and box["y"] >= 0
            and box["x"] + box["width"] <= width + 0.5 and box["y"] + box["height"] <= height + 0.5)


@pytest.fixture(scope="module")
def lp_pool_found(tmp_path_factory: pytest.TempPathFactory) -> FoundResult:
    return find_lp_pool_finding(tmp_path_factory.mktemp("pool"))


# Playwright's waits default to 30 s, a speed limit a busy machine misses (a decision's page took longer beside a
# full suite and a fuzz run). Its waits are hang guards here, so they get room; no test asserts on time.
WAIT_MS = 180_000


class PatientBrowser:
    """The launched browser, whose new pages and contexts wait up to WAIT_MS before calling a wait a hang."""

    def __init__(self, launched: Any) -> None:
        self._launched = launched

    def new_page(self, **options: Any) -> Any:
        page = self._launched.new_page(**options)
        page.set_default_timeout(WAIT_MS)
        page.set_default_navigation_timeout(WAIT_MS)
        return page

    def new_context(self, **options: Any) -> Any:
        context = self._launched.new_context(**options)
        context.set_default_timeout(WAIT_MS)
        context.set_default_navigation_timeout(WAIT_MS)
        return context

    def __getattr__(self, name: str) -> Any:
        return getattr(self._launched, name)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as driver:
        launched = launch(driver)
        yield PatientBrowser(launched)
        launched.close()
