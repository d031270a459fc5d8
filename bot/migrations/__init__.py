"""Alembic's script directory for Sleuth's schema; `bot.schema.upgrade` runs it (`sleuth db upgrade`)."""
