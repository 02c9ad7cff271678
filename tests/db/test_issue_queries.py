"""Issue upsert (idempotent, change-detecting, batched) and ingest cursors, on SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update

from db.models import Issue
from db.queries.issues import (
    IssueRow,
    as_utc,
    content_hash,
    get_cursor,
    set_cursor,
    stored_issue_states,
    upsert_issues,
)
from db.store import Store

T0 = datetime(2024, 1, 10, 11, 22, 5, tzinfo=UTC)
COMMENT = {"author": "maintainer", "body": "Not a bug: fp16 rounding.", "created_at": "2024-01-11T09:00:00Z"}


def _row(number: int, **changes: object) -> IssueRow:
    row = IssueRow(
        repo="o/r",
        number=number,
        title=f"issue {number}",
        body="torch.mm returns wrong values",
        labels=["module: correctness (silent)", "triaged"],
        state="open",
        created_at=T0,
        updated_at=T0,
        closed_at=None,
        url=f"https://github.com/o/r/issues/{number}",
        comments=[COMMENT],
        raw={"number": number},
    )
    return replace(row, **changes)  # type: ignore[arg-type]


def _issues(store: Store) -> dict[int, Issue]:
    with store.session() as session:
        return {issue.number: issue for issue in session.scalars(select(Issue))}


def _clear_flags(store: Store) -> None:
    with store.session() as session:
        session.execute(update(Issue).values(needs_extraction=False))


def test_new_issues_are_inserted_and_marked_for_extraction(store: Store) -> None:
    with store.session() as session:
        counts = upsert_issues(session, [_row(1), _row(2)])
    assert (counts.new, counts.updated, counts.unchanged) == (2, 0, 0)
    issues = _issues(store)
    assert set(issues) == {1, 2}
    first = issues[1]
    assert first.needs_extraction is True
    assert first.labels == ["module: correctness (silent)", "triaged"]
    assert first.comments == [COMMENT]
    assert as_utc(first.updated_at) == T0
    assert first.content_hash == content_hash(first.title, first.body, first.labels, first.state, first.comments)


def test_reupserting_the_same_content_touches_nothing(store: Store) -> None:
    with store.session() as session:
        upsert_issues(session, [_row(1), _row(2)])
    _clear_flags(store)
    before = _issues(store)
    with store.session() as session:
        counts = upsert_issues(session, [_row(1), _row(2)])
    assert (counts.new, counts.updated, counts.unchanged) == (0, 0, 2)
    after = _issues(store)
    for number in (1, 2):
        assert after[number].needs_extraction is False
        assert after[number].changed_at == before[number].changed_at
        assert after[number].ingested_at == before[number].ingested_at


def test_a_content_change_updates_the_row_and_marks_it(store: Store) -> None:
    with store.session() as session:
        upsert_issues(session, [_row(1), _row(2), _row(3), _row(4)])
    _clear_flags(store)
    before = _issues(store)
    changed = [
        _row(1, title="issue 1 (edited)"),
        _row(2, labels=["triaged"]),
        _row(3, state="closed", closed_at=T0 + timedelta(days=1)),
        _row(4, comments=[COMMENT, {**COMMENT, "body": "Confirmed, fixed in #9."}]),
    ]
    with store.session() as session:
        counts = upsert_issues(session, changed)
    assert (counts.new, counts.updated, counts.unchanged) == (0, 4, 0)
    after = _issues(store)
    assert after[1].title == "issue 1 (edited)"
    assert after[2].labels == ["triaged"]
    assert after[3].state == "closed" and as_utc(after[3].closed_at) == T0 + timedelta(days=1)
    assert len(after[4].comments) == 2
    for number in (1, 2, 3, 4):
        assert after[number].needs_extraction is True
        assert after[number].id == before[number].id
        assert after[number].changed_at >= before[number].changed_at
        assert after[number].content_hash != before[number].content_hash


def test_metadata_outside_the_hash_does_not_count_as_a_change(store: Store) -> None:
    with store.session() as session:
        upsert_issues(session, [_row(1)])
    with store.session() as session:
        counts = upsert_issues(session, [_row(1, updated_at=T0 + timedelta(hours=1), raw={"number": 1, "reactions": 3})])
    assert counts.unchanged == 1
    assert as_utc(_issues(store)[1].updated_at) == T0


def test_rows_without_comments_keep_the_stored_comments(store: Store) -> None:
    with store.session() as session:
        upsert_issues(session, [_row(1)])
    _clear_flags(store)
    with store.session() as session:
        same = upsert_issues(session, [_row(1, comments=None)])
        edited = upsert_issues(session, [_row(1, comments=None, body="edited body")])
    assert same.unchanged == 1
    assert edited.updated == 1
    issue = _issues(store)[1]
    assert issue.comments == [COMMENT]
    assert issue.body == "edited body"


def test_a_new_row_without_comments_stores_an_empty_list(store: Store) -> None:
    with store.session() as session:
        upsert_issues(session, [_row(7, comments=None)])
    assert _issues(store)[7].comments == []


def test_the_last_copy_in_a_batch_wins(store: Store) -> None:
    with store.session() as session:
        counts = upsert_issues(session, [_row(1, title="first"), _row(1, title="second")])
    assert counts.new == 1
    assert _issues(store)[1].title == "second"


def test_same_number_in_two_repositories_are_two_issues(store: Store) -> None:
    with store.session() as session:
        counts = upsert_issues(session, [_row(1), _row(1, repo="other/repo")])
    assert counts.new == 2
    with store.session() as session:
        assert len(session.scalars(select(Issue)).all()) == 2


def test_hash_ignores_label_order_but_not_label_names() -> None:
    a = content_hash("t", "b", ["x", "y"], "open", [])
    assert a == content_hash("t", "b", ["y", "x"], "open", [])
    assert a != content_hash("t", "b", ["x"], "open", [])
    assert a != content_hash("t", "b", ["x", "y"], "closed", [])


def test_stored_issue_states(store: Store) -> None:
    with store.session() as session:
        upsert_issues(session, [_row(1), _row(2, comments=[])])
    with store.session() as session:
        states = stored_issue_states(session, "o/r", [1, 2, 3])
    assert set(states) == {1, 2}
    assert states[1].updated_at == T0 and states[1].comment_count == 1
    assert states[2].comment_count == 0


def test_cursor_is_created_moved_forward_and_never_back(store: Store) -> None:
    key = "o/r?labels=&state=all&since="
    with store.session() as session:
        assert get_cursor(session, key) is None
        set_cursor(session, key, repo="o/r", filters={"state": "all"}, last_updated_at=T0, etag='W/"a"')
    with store.session() as session:
        cursor = get_cursor(session, key)
    assert cursor is not None
    assert cursor.last_updated_at == T0 and cursor.etag == 'W/"a"' and cursor.filters == {"state": "all"}
    first_sync = cursor.synced_at
    with store.session() as session:
        set_cursor(session, key, repo="o/r", filters={"state": "all"}, last_updated_at=T0 - timedelta(days=1), etag=None)
    with store.session() as session:
        cursor = get_cursor(session, key)
    assert cursor is not None
    assert cursor.last_updated_at == T0  # not moved back
    assert cursor.etag is None
    assert cursor.synced_at >= first_sync
    with store.session() as session:
        set_cursor(session, key, repo="o/r", filters={"state": "all"}, last_updated_at=T0 + timedelta(days=1), etag='W/"b"')
    with store.session() as session:
        cursor = get_cursor(session, key)
    assert cursor is not None and cursor.last_updated_at == T0 + timedelta(days=1) and cursor.etag == 'W/"b"'
