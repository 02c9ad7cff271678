"""patterns: the source re-check's outcome and basis as columns (the full record stays in source_check)

"Reproduces on this torch" used to be a bare boolean set from the source API's harness verdicts. It is
now decided by the report's own repro when it has one (run in the sandbox), else by the harness, and a
closed report that no longer reproduces is "fixed". Existing booleans came from the harness: they are
carried over with that basis.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 10:00:00.000000
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0007'
down_revision: Union[str, None] = '0006'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('patterns', schema=None) as batch_op:
        batch_op.add_column(sa.Column('source_outcome', sa.String(length=30), nullable=True))
        batch_op.add_column(sa.Column('source_basis', sa.String(length=30), nullable=True))
    patterns = sa.table('patterns', sa.column('source_reproduces', sa.Boolean()),
                        sa.column('source_outcome', sa.String()), sa.column('source_basis', sa.String()))
    for flag, outcome in ((True, 'reproduces'), (False, 'does_not_reproduce')):
        op.execute(patterns.update().where(patterns.c.source_reproduces == flag)
                   .values(source_outcome=outcome, source_basis='harness'))


def downgrade() -> None:
    with op.batch_alter_table('patterns', schema=None) as batch_op:
        batch_op.drop_column('source_basis')
        batch_op.drop_column('source_outcome')
