"""Alembic environment: the engine comes from the app (db.engine), never from a hard-coded URL."""

from __future__ import annotations

from alembic import context

from db.base import Base
from db.engine import make_engine, resolve_db_url
import db.models  # noqa: F401  (registers the tables on Base.metadata)

config = context.config
target_metadata = Base.metadata


def _engine():
    engine = config.attributes.get("engine")
    if engine is not None:
        return engine
    return make_engine(resolve_db_url(config.get_main_option("sqlalchemy.url") or None))


def run_migrations_offline() -> None:
    context.configure(
        url=resolve_db_url(config.get_main_option("sqlalchemy.url") or None),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = _engine()
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
            compare_type=True,
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
