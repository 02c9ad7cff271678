"""In Chromium: selecting a root-cause group on the queue and exporting it lists the finding a reviewer rejected
before anything is exported, and "export without them" downloads what `transfuzz export` writes (Note [Exporting a
selection])."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.app import app as cli_app
from db.store import Store, open_store
from tests.agent.review.var_family import VarFamily, build_var_family
from tests.agent.web.chromium import browser, browser_marks  # noqa: F401  (browser: a fixture)
from tests.agent.web.server import RunningServer, review_server

pytestmark = browser_marks
playwright_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Store, VarFamily, RunningServer]]:
    store = open_store(f"sqlite:///{tmp_path / 'review.db'}")
    with store.session() as session:
        family = build_var_family(session)
    try:
        with review_server(store) as server:
            yield store, family, server
    finally:
        store.close()


def test_group_export_lists_the_rejected_finding_then_matches_the_cli(browser, site, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store, family, server = site
    ids = family.finding_ids
    page = browser.new_page(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    page.goto(f"{server.base_url}/login?token={server.token}")
    page.goto(f"{server.base_url}/queue?status=&verdict=confirmed")
    # The overflow group's lead folds the rejected var finding under it; selecting the lead selects the group.
    page.check(f"#queue input[name=id][value='{ids['var']}']")
    assert page.is_checked(f"#queue input[name=id][value='{ids['var_rejected']}']")
    page.click("#export-selection")
    page.wait_for_selector("#rejected-warning")
    listed = page.eval_on_selector_all("#rejected-findings tr[data-id]", "rows => rows.map(r => Number(r.dataset.id))")
    assert listed == [ids["var_rejected"]]
    assert "the float64 reference overflows too" in page.inner_text("#rejected-findings")
    with page.expect_download() as download:
        page.click("#export-exclude")
    archive = zipfile.ZipFile(io.BytesIO(Path(download.value.path()).read_bytes()))
    exported = {n.removeprefix("transfuzz-export/"): archive.read(n) for n in archive.namelist()}
    index = json.loads(exported["index.json"])
    assert [sorted(e["finding_ids"]) for e in index["reports"]] == [sorted([ids["var"], ids["std"], ids["var_mean"]])]
    assert ids["var_rejected"] not in {i for e in index["reports"] for i in e["finding_ids"]}

    # The CLI's export of the same findings: its overflow report (and that report's repro files) are the same bytes.
    out = tmp_path / "cli"
    result = CliRunner().invoke(cli_app, ["--db", store.url, "export", "--format", "markdown", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    cli_index = json.loads((out / "index.json").read_text())
    overflow = next(e for e in cli_index["reports"] if ids["var"] in e["finding_ids"])
    page_entry = index["reports"][0]
    for name in [*overflow["repro_files"], *overflow["inputs_files"], *overflow["short_repro_files"]]:
        assert exported[name] == (out / name).read_bytes()
    # The overflow group is the oldest in both exports, so it is report 1 in both: the same entry, the same bytes.
    assert page_entry == overflow
    assert exported[page_entry["file"]] == (out / overflow["file"]).read_bytes()
    page.close()
