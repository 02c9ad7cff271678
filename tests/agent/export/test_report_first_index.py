"""A report places first_index in the output it indexes, with that output's shape."""

from __future__ import annotations

from pathlib import Path

from agent.export.environment import capture_environment
from agent.export.pipeline import export_findings
from db.store import Store
from tests.agent.review.rows import add_finding, build_lineage


def test_first_index_is_reported_with_the_output_shape(store: Store, tmp_path: Path) -> None:
    with store.session() as session:
        add_finding(session, build_lineage(session).harness_id, first_index=[1, 2], output_shape=[3, 3])
    index = export_findings(store, tmp_path, status="confirmed", fmt="markdown",
                            environment=capture_environment(collect_env=False))
    (entry,) = index.reports
    text = (tmp_path / entry.file).read_text()
    assert "first at index \\[1, 2\\] of the output (shape \\[3, 3\\])" in text
