"""Real rows for query tests: an issue with one extracted pattern."""

from __future__ import annotations

from agent.patterns import BugPattern, Mode, Oracle, Trigger
from db import models
from db.store import Store

RELU6_PATTERN = BugPattern(
    kind="JIT_Eager_Mismatch", api="torch.nn.functional.relu6", reference_mode=Mode(name="eager"),
    test_mode=Mode(name="jit.trace"), trigger=Trigger(special_values=["nan"]), oracle=Oracle(tol=1e-5),
)


def add_issue_with_pattern(store: Store, pattern: BugPattern = RELU6_PATTERN, number: int = 101) -> int:
    with store.session() as session:
        issue = models.Issue(repo="pytorch/pytorch", number=number, title="relu6 NaN under trace",
                             body="", content_hash="h" * 64)
        session.add(issue)
        session.flush()
        row = models.Pattern(
            issue_id=issue.id, kind=pattern.kind.value, api=pattern.api,
            reference_mode=pattern.reference_mode.name, test_mode=pattern.test_mode.name,
            trigger=pattern.trigger.model_dump(), oracle=pattern.oracle.model_dump(mode="json"),
            formal=pattern.to_formal(), extractor="test", extractor_version="1", status="extracted",
        )
        session.add(row)
        session.flush()
        return row.id
