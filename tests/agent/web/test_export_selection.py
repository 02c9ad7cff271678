"""The page's "Export selection" writes what `transfuzz export` writes for the same findings, and asks before
including findings a reviewer rejected (real server, real CLI, SQLite and PostgreSQL)."""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from agent.cli.app import app as cli_app
from db.store import Store
from tests.agent.review.var_family import VarFamily, build_var_family
from tests.agent.web.server import RunningServer, review_server

# What `transfuzz export --status confirmed` covers in the var family: confirmed and not rejected.
CONFIRMED = ("var", "std", "var_mean", "sum_overflow", "std_value", "direct_var_mean", "direct_std_mean")


@pytest.fixture
def family(store: Store) -> VarFamily:
    with store.session() as session:
        return build_var_family(session)


@pytest.fixture
def server(store: Store, family: VarFamily) -> Iterator[RunningServer]:
    with review_server(store) as running:
        yield running


@contextmanager
def _signed_in(server: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=120) as client:
        client.cookies = client.get("/login", params={"token": server.token}, follow_redirects=False).cookies
        yield client


def _cli_export(store: Store, out: Path, fmt: str) -> dict[str, bytes]:
    result = CliRunner().invoke(cli_app, ["--db", store.url, "export", "--status", "confirmed", "--format", fmt,
                                          "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def _unzip(data: bytes) -> dict[str, bytes]:
    archive = zipfile.ZipFile(io.BytesIO(data))
    return {name.removeprefix("transfuzz-export/"): archive.read(name) for name in archive.namelist()}


def _form(html: str, form_id: str) -> list[tuple[str, str]]:
    """The name/value pairs a browser without JavaScript submits for the form with this id."""
    body = html.split(f'id="{form_id}"', 1)[1].split("</form>", 1)[0]
    return [(unescape(n), unescape(v)) for n, v in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', body)]


def _same_export(page: dict[str, bytes], cli: dict[str, bytes]) -> None:
    assert sorted(page) == sorted(cli)
    for name in cli:
        if name == "index.json":
            continue
        assert page[name] == cli[name], f"{name} differs between the page's export and `transfuzz export`"
    page_index, cli_index = json.loads(page["index.json"]), json.loads(cli["index.json"])
    assert (page_index["status"], cli_index["status"]) == ("selection", "confirmed")
    for key in ("generated_at", "status"):
        page_index.pop(key), cli_index.pop(key)
    assert page_index == cli_index


@pytest.mark.parametrize("fmt", ["json", "markdown"])
def test_page_export_equals_cli_export_for_the_same_findings(store: Store, family: VarFamily, server: RunningServer,
                                                             tmp_path: Path, fmt: str) -> None:
    cli = _cli_export(store, tmp_path / "cli", fmt)
    ids = [family.finding_ids[name] for name in CONFIRMED]
    with _signed_in(server) as client:
        response = client.get("/export", params={"id": ids, "format": fmt})
    assert response.status_code == 200 and response.content.startswith(b"PK"), response.text[:500]
    page = _unzip(response.content)
    _same_export(page, cli)
    index = json.loads(page["index.json"])
    # One root-cause grouping: var, std and var_mean from one overflow are one report (std_mean is only suspicious).
    groups = sorted(sorted(entry["finding_ids"]) for entry in index["reports"])
    f = family.finding_ids
    assert groups == sorted([sorted([f["var"], f["std"], f["var_mean"]]), [f["sum_overflow"]], [f["std_value"]],
                             sorted([f["direct_var_mean"], f["direct_std_mean"]])])
    assert index["report_count"] == 4


def test_rejected_findings_are_listed_and_left_out_unless_confirmed(store: Store, family: VarFamily,
                                                                    server: RunningServer, tmp_path: Path) -> None:
    f = family.finding_ids
    cli = _cli_export(store, tmp_path / "cli", "json")
    chosen = [f[name] for name in CONFIRMED] + [f["var_rejected"]]
    with _signed_in(server) as client:
        warning = client.get("/export", params={"id": chosen, "format": "json"})
        assert warning.status_code == 200 and warning.headers["content-type"].startswith("text/html")
        html = warning.text
        assert 'id="rejected-warning"' in html
        listed = re.findall(r'<tr data-id="(\d+)">', html.split('id="rejected-findings"', 1)[1])
        assert listed == [str(f["var_rejected"])]
        assert "the float64 reference overflows too" in html and ">ann<" in html
        # Without JavaScript: each choice is a plain form of this page.
        exclude = client.get("/export", params=_form(html, "export-without-rejected"))
        include = client.get("/export", params=_form(html, "export-with-rejected"))
    assert exclude.status_code == 200 and exclude.content.startswith(b"PK")
    _same_export(_unzip(exclude.content), cli)  # left out: the same export as the CLI's
    included = json.loads(_unzip(include.content)["index.json"])
    overflow = next(e for e in included["reports"] if f["var"] in e["finding_ids"])
    assert f["var_rejected"] in overflow["finding_ids"]  # included on purpose: in its root-cause group
    assert included["report_count"] == 4


def test_only_rejected_findings_chosen_offers_no_export_without_them(family: VarFamily, server: RunningServer) -> None:
    with _signed_in(server) as client:
        page = client.get("/export", params={"id": [family.finding_ids["var_rejected"]]})
        assert page.status_code == 200 and 'id="export-with-rejected"' in page.text
        assert 'id="export-without-rejected"' not in page.text
        nothing = client.get("/export", params={"id": [family.finding_ids["var_rejected"]], "rejected": "exclude"})
    assert nothing.status_code == 400 and "every chosen finding was rejected" in nothing.text


def test_api_export_leaves_rejected_out_and_says_which(family: VarFamily, server: RunningServer) -> None:
    f = family.finding_ids
    auth = {"Authorization": f"Bearer {server.token}"}
    with httpx.Client(base_url=server.base_url, timeout=120) as client:
        default = client.get("/api/export", params={"id": [f["var"], f["var_rejected"]], "format": "json"}, headers=auth)
        included = client.get("/api/export", params={"id": [f["var"], f["var_rejected"]], "format": "json",
                                                     "rejected": "include"}, headers=auth)
    assert default.status_code == 200 and default.headers["x-transfuzz-excluded-rejected"] == str(f["var_rejected"])
    assert json.loads(_unzip(default.content)["index.json"])["reports"][0]["finding_ids"] == [f["var"]]
    assert "x-transfuzz-excluded-rejected" not in included.headers
    assert json.loads(_unzip(included.content)["index.json"])["reports"][0]["finding_ids"] == [f["var"], f["var_rejected"]]
