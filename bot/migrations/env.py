"""Alembic's environment: runs on the connection `bot.schema.upgrade` hands it (never reads a URL itself)."""

from __future__ import annotations

from alembic import context

from bot.migrations.env_filter import include_name
from bot.schema import all_metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection, target_metadata=all_metadata(), render_as_batch=True, include_name=include_name
)
with context.begin_transaction():
    context.run_migrations()
