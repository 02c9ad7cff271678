"""A worker's folder is writable from inside the sandbox, so what a finding's evidence names there may have been
replaced by the time it is read: a symlink to a host file, a FIFO, a huge file. `transfuzz export` and
`transfuzz review show --replay` (the real CLI, a real SQLite database, real files) refuse each one with a
message that names the path, and no host byte leaves (issue 22, item 1)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.app import app
from db.store import open_store
from fuzz_core.safe_files import MAX_ARTIFACT_BYTES
from tests.agent.review.rows import INPUTS_REPRO_TEMPLATE, add_finding, build_lineage, save_wrong_inputs

runner = CliRunner()
HOST_SECRET = "HOST-SECRET-d41d8cd98f00b204"


@pytest.fixture
def host_file(tmp_path: Path) -> Path:
    secret = tmp_path / "host" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text(HOST_SECRET)
    return secret


def _task_dir(tmp_path: Path) -> Path:
    """A task folder inside a worker's folder, as fuzz_core/workers.py lays it out."""
    folder = tmp_path / "artifacts" / "tf_worker0_k3j2" / "home" / "task_7_abc"
    folder.mkdir(parents=True)
    return folder


def _database(tmp_path: Path, inputs_path: str) -> tuple[str, int]:
    url = f"sqlite:///{tmp_path / 'findings.db'}"
    store = open_store(url)
    try:
        with store.session() as session:
            rows = build_lineage(session)
            finding = add_finding(session, rows.harness_id, repro=INPUTS_REPRO_TEMPLATE.format(inputs_path=inputs_path),
                                  inputs_path=inputs_path)
    finally:
        store.close()
    return url, finding


def _export(url: str, out: Path) -> tuple[dict, str]:
    done = runner.invoke(app, ["--db", url, "--json", "export", "--out", str(out)])
    assert done.exit_code == 0, done.output
    index = json.loads((out / "index.json").read_text())
    texts = "\n".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    return index, re.sub(r"\\(.)", r"\1", texts)  # the report escapes Markdown (`\_`, `\(`): read it as shown


def _planted_link(tmp_path: Path, host_file: Path) -> Path:
    planted = _task_dir(tmp_path) / "inputs_3.safetensors"
    planted.symlink_to(host_file)
    return planted


def test_export_refuses_a_planted_link_to_a_host_file_and_says_which(tmp_path: Path, host_file: Path) -> None:
    planted = _planted_link(tmp_path, host_file)
    url, finding = _database(tmp_path, str(planted))
    index, texts = _export(url, tmp_path / "out")
    [report] = index["reports"]
    assert report["inputs_files"] == [] and not list((tmp_path / "out").glob("inputs_*"))
    assert HOST_SECRET not in texts
    assert f"its saved inputs (`{planted}`) were not exported: {planted} is a symbolic link" in texts
    assert host_file.read_text() == HOST_SECRET  # untouched


def test_export_refuses_a_fifo_without_waiting_on_it(tmp_path: Path) -> None:
    fifo = _task_dir(tmp_path) / "inputs_3.safetensors"
    os.mkfifo(fifo)  # a blocking open would wait for a writer forever; pytest's timeout would end the test
    url, _ = _database(tmp_path, str(fifo))
    index, texts = _export(url, tmp_path / "out")
    assert index["reports"][0]["inputs_files"] == []
    assert f"{fifo} is not a regular file (a FIFO)" in texts


def test_export_refuses_an_oversize_file(tmp_path: Path) -> None:
    huge = _task_dir(tmp_path) / "inputs_3.safetensors"
    with open(huge, "wb") as f:
        f.truncate(MAX_ARTIFACT_BYTES + 1)  # sparse: no disk used, and it is refused before a byte is read
    url, _ = _database(tmp_path, str(huge))
    index, texts = _export(url, tmp_path / "out")
    assert index["reports"][0]["inputs_files"] == []
    assert f"{huge} is {MAX_ARTIFACT_BYTES + 1} bytes, more than the {MAX_ARTIFACT_BYTES}" in texts


def test_export_still_copies_a_regular_saved_input(tmp_path: Path) -> None:
    # The control: the same layout with an honest file is exported, so the refusals above are about the file.
    saved = save_wrong_inputs(_task_dir(tmp_path) / "inputs_3.safetensors")
    url, finding = _database(tmp_path, saved)
    index, _ = _export(url, tmp_path / "out")
    assert index["reports"][0]["inputs_files"] == [f"inputs_{finding}.safetensors"]
    assert (tmp_path / "out" / f"inputs_{finding}.safetensors").read_bytes() == Path(saved).read_bytes()


def _replay(url: str, finding: int) -> str:
    done = runner.invoke(app, ["--db", url, "review", "show", str(finding), "--replay"])
    assert done.exit_code == 0, done.output
    return done.output


def test_replay_refuses_a_planted_link_and_says_which(tmp_path: Path, host_file: Path) -> None:
    planted = _planted_link(tmp_path, host_file)
    url, finding = _database(tmp_path, str(planted))
    out = _replay(url, finding)
    assert f"replay: the saved input was refused: {planted} is a symbolic link" in " ".join(out.split())
    assert HOST_SECRET not in out


def test_replay_refuses_an_oversize_file(tmp_path: Path) -> None:
    huge = _task_dir(tmp_path) / "inputs_3.safetensors"
    with open(huge, "wb") as f:
        f.truncate(MAX_ARTIFACT_BYTES + 1)
    url, finding = _database(tmp_path, str(huge))
    out = " ".join(_replay(url, finding).split())
    assert f"replay: the saved input was refused: {huge} is {MAX_ARTIFACT_BYTES + 1} bytes" in out
