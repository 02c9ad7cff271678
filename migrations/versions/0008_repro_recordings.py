"""repro_recordings: what each report's own repro ran, recorded in the sandbox

One row per issue: the validated recording (torch calls with shapes, dtypes, devices, contexts; printed
lines; how the script ended) and the pattern facts read from it. JSON columns (JSONB on PostgreSQL).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 10:00:00.000000
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa
from sqlalchemy import Text  # autogenerate renders JSONB variants as JSONB(astext_type=Text())
from sqlalchemy.dialects import postgresql


revision: str = '0008'
down_revision: Union[str, None] = '0007'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    json_type = sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), 'postgresql')
    op.create_table('repro_recordings',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('issue_id', sa.Integer(), nullable=False),
    sa.Column('code_sha256', sa.String(length=64), nullable=False),
    sa.Column('recorder_version', sa.String(length=20), nullable=False),
    sa.Column('torch_version', sa.String(length=50), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('exit_code', sa.Integer(), nullable=True),
    sa.Column('seconds', sa.Float(), nullable=False),
    sa.Column('recording', json_type, nullable=False),
    sa.Column('facts', json_type, nullable=False),
    sa.Column('output_tail', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['issue_id'], ['issues.id'], name=op.f('fk_repro_recordings_issue_id_issues'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_repro_recordings')),
    sa.UniqueConstraint('issue_id', name=op.f('uq_repro_recordings_issue_id'))
    )


def downgrade() -> None:
    op.drop_table('repro_recordings')
