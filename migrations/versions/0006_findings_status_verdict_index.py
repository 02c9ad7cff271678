"""findings: one index on (review_status, verdict) for the review queue's per-status counts

The queue counts findings per review status under every other filter, on every page. With an index
on review_status alone PostgreSQL counts a verdict-filtered queue from the heap; with
(review_status, verdict) it answers from the index (an index-only scan once autovacuum has marked
the pages visible). The new index leads with review_status, so it replaces the old one.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 10:00:00.000000
"""
from typing import Sequence, Union

from alembic import op


revision: str = '0006'
down_revision: Union[str, None] = '0005'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_index('ix_findings_review_status_verdict', 'findings', ['review_status', 'verdict'])
    op.drop_index('ix_findings_review_status', table_name='findings')


def downgrade() -> None:
    op.create_index('ix_findings_review_status', 'findings', ['review_status'])
    op.drop_index('ix_findings_review_status_verdict', table_name='findings')
