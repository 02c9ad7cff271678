"""one verdict per claim: findings carry the claim (attempt) and variant they came from, unique together

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 14:00:00.000000
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0005'
down_revision: Union[str, None] = '0004'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    # Older rows keep attempt NULL: NULLs never collide, so the constraint holds for them as they are.
    with op.batch_alter_table('findings', schema=None) as batch_op:
        batch_op.add_column(sa.Column('attempt', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('variant', sa.String(length=64), server_default='', nullable=False))
        batch_op.create_unique_constraint('uq_findings_harness_id', ['harness_id', 'attempt', 'variant'])


def downgrade() -> None:
    with op.batch_alter_table('findings', schema=None) as batch_op:
        batch_op.drop_constraint('uq_findings_harness_id', type_='unique')
        batch_op.drop_column('variant')
        batch_op.drop_column('attempt')
