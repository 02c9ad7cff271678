"""Without bubblewrap, every command that runs issue- or LLM-derived work exits 2 saying how to install it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.app import app

runner = CliRunner()


@pytest.mark.parametrize("args", [
    ["fuzz", "--budget", "10s"],
    ["run", "examples/does-not-matter.json", "--budget", "30s"],
    ["fuzz", "api", "torch.add", "--budget", "2x"],
    ["export", "--check-repro"],
])
def test_a_missing_bwrap_is_a_usage_error_with_the_install_hint(args: list[str], tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRANSFUZZ_BWRAP", str(tmp_path / "no-bwrap"))
    db = f"sqlite:///{tmp_path / 't.db'}"
    out = ["--out", str(tmp_path / "out")] if args[0] == "export" else []
    result = runner.invoke(app, ["--db", db, *args, *out])
    assert result.exit_code == 2, result.output
    assert "apt-get install bubblewrap" in result.output and "--no-sandbox" in result.output
    assert not (tmp_path / "out").exists()  # refused before doing any work


def test_no_sandbox_runs_fuzz_api_without_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRANSFUZZ_BWRAP", str(tmp_path / "no-bwrap"))
    result = runner.invoke(app, ["fuzz", "api", "torch.add", "--pattern", "Layout_Mismatch", "--budget", "3x",
                                 "--out", str(tmp_path / "o"), "--json", "--no-sandbox"])
    assert result.exit_code in (0, 1), result.output
    assert '"verdict"' in result.output
