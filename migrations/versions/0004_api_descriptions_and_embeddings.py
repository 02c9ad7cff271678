"""api descriptions and embeddings caches

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 10:00:00.000000
"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa
from sqlalchemy import Text  # autogenerate renders JSONB variants as JSONB(astext_type=Text())
from sqlalchemy.dialects import postgresql


revision: str = '0004'
down_revision: Union[str, None] = '0003'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('api_descriptions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('torch_version', sa.String(length=50), nullable=False),
    sa.Column('api', sa.String(length=300), nullable=False),
    sa.Column('prompt_version', sa.String(length=50), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('category', sa.String(length=50), nullable=False),
    sa.Column('summary', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_descriptions')),
    sa.UniqueConstraint('torch_version', 'api', 'prompt_version', 'model', name=op.f('uq_api_descriptions_torch_version'))
    )
    op.create_table('api_embeddings',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('torch_version', sa.String(length=50), nullable=False),
    sa.Column('api', sa.String(length=300), nullable=False),
    sa.Column('text_hash', sa.String(length=64), nullable=False),
    sa.Column('dims', sa.Integer(), nullable=False),
    sa.Column('vector', sa.JSON().with_variant(postgresql.JSONB(astext_type=Text()), 'postgresql'), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_embeddings')),
    sa.UniqueConstraint('model', 'torch_version', 'api', name=op.f('uq_api_embeddings_model'))
    )


def downgrade() -> None:
    op.drop_table('api_embeddings')
    op.drop_table('api_descriptions')
