"""The campaign's progress lines on stderr: data in a harness result is printed literally, never as rich markup."""

from __future__ import annotations

from typer.testing import CliRunner

from agent.cli.app import app
from db.models import Harness
from db.store import Store
from tests.agent.review.rows import spec

runner = CliRunner()


def test_markup_and_escape_sequences_in_results_print_literally(store: Store) -> None:
    # Stored specs the engine refuses; the refusal quotes the bad value in the verdict's reason.
    closing_tag = {**spec("torch.relu", "compile:inductor"), "trigger": {"layout": "[/x]"}}
    bold = {**spec("torch.relu", "compile:inductor"), "trigger": {"shape": ["[bold]x\x1b]52;c;eA==\x07"]}}
    with store.session() as session:
        session.add_all([Harness(candidate_id=None, spec=closing_tag, status="pending"),
                         Harness(candidate_id=None, spec=bold, status="pending")])
    result = runner.invoke(app, ["--db", store.url, "fuzz", "--budget", "30s", "--workers", "1", "--no-sandbox"])
    assert result.exit_code == 0, result.stderr
    assert "'[/x]'" in result.stderr and "'[bold]x" in result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "error: 2" in result.stdout
