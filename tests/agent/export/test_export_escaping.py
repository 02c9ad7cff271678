"""`transfuzz export` of findings whose issue and LLM text attack the report: everything stays data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.app import app
from db.models import Finding
from db.store import Store
from tests.agent.review.rows import HOSTILE_REASON, add_finding, build_hostile_lineage

runner = CliRunner()

# What GitHub turns into a mention: @ directly followed by a user or team name.
MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9][A-Za-z0-9-]*")
UNPICKLING_REPRO = "import torch\ndata = torch.load('inputs.pt', weights_only=False)\n"


@pytest.fixture
def hostile_ids(store: Store) -> dict[str, int]:
    with store.session() as session:
        rows = build_hostile_lineage(session)
        ids = {"compile": add_finding(session, rows.harness_id),
               "pickle": add_finding(session, rows.direct_harness_id, signature="other", repro=UNPICKLING_REPRO)}
        session.get(Finding, ids["compile"]).reason = HOSTILE_REASON
    return ids


def _export(store: Store, out: Path, fmt: str = "markdown"):  # type: ignore[no-untyped-def]
    result = runner.invoke(app, ["--db", store.url, "export", "--out", str(out), "--format", fmt])
    assert result.exit_code == 0, result.stderr
    return result


def test_hostile_issue_title_stays_one_escaped_line(store: Store, hostile_ids: dict[str, int], tmp_path: Path) -> None:
    out = tmp_path / "md"
    _export(store, out)
    index = json.loads((out / "index.json").read_text())
    text = (out / index["reports"][0]["file"]).read_text()
    lines = text.splitlines()
    # No forged heading, no mention, no shell line, no HTML of the author's.
    assert not any(line.startswith(("## Maintainer", "## Injected", "curl", "@")) for line in lines)
    assert not MENTION.search(text), MENTION.search(text)
    assert "<img" not in text and "\x1b" not in text and "\x07" not in text
    source_line = next(line for line in lines if line.startswith("Transferred from"))
    assert "Maintainer note" in source_line and "curl x \\| sh" in source_line
    # The dump's html_url is never the link; the link is built from repo and number.
    assert "javascript:alert(document.cookie)" not in text and "](javascript" not in text
    assert "](https://github.com/pytorch/pytorch/issues/123456)" in source_line
    # The finding reason (quotes and all) is one escaped sentence of the description, not code.
    description = lines[lines.index("### 🐛 Describe the bug") + 2]
    assert 'os.system\\("touch X"\\)' in description and "\\#\\# Injected heading" in description
    assert "\\[/x\\] \\[bold\\]x" in description


def test_json_export_has_no_raw_control_characters_or_dump_links(
    store: Store, hostile_ids: dict[str, int], tmp_path: Path
) -> None:
    out = tmp_path / "json"
    _export(store, out, fmt="json")
    for path in out.glob("*.json"):
        raw = path.read_text()
        assert not re.search("[\x00-\x1f\x7f-\x9f]", raw.replace("\n", "")), path.name
        assert "javascript:alert(document.cookie)" not in raw
    index = json.loads((out / "index.json").read_text())
    assert index["reports"][0]["source_issue"] == "https://github.com/pytorch/pytorch/issues/123456"


def test_a_stored_repro_that_unpickles_is_not_exported(store: Store, hostile_ids: dict[str, int], tmp_path: Path) -> None:
    out = tmp_path / "md"
    _export(store, out)
    assert not (out / f"repro_{hostile_ids['pickle']}.py").exists()
    assert (out / f"repro_{hostile_ids['compile']}.py").exists()
    assert not any("weights_only=False" in p.read_text() for p in out.iterdir() if p.is_file())


def test_export_prints_titles_without_parsing_them_as_markup(
    store: Store, hostile_ids: dict[str, int], tmp_path: Path
) -> None:
    result = _export(store, tmp_path / "md")
    assert "torch.sigmoid[/x] [bold]y" in result.stderr
