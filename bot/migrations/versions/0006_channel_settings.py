"""Per-channel setup (bot.channels), what happened to the questions taken in channels (bot.channel_activity),
and which jobs were asked of the channel rather than of Sleuth (slack_jobs.unsolicited).

Revision ID: 0006_channels
Revises: 0005_derived
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_channels"
down_revision = "0005_derived"
branch_labels = None
depends_on = None
# Column by column, as Alembic writes it: a revision is frozen history, so it repeats the shape of the tables
# it creates (and of other revisions) instead of importing code that may change later. Duplicates on purpose.


def upgrade() -> None:
    op.create_table(
        "channel_settings",
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("config", sa.Text(), nullable=False),
        sa.Column("set_by", sa.String(length=64), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("channel"),
        if_not_exists=True,
    )
    op.create_table(
        "channel_activity",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("thread_ts", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("user", sa.String(length=64), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("channel", "thread_ts", "kind", name="uq_channel_activity"),
        if_not_exists=True,
    )
    # a job queue started by this code already has it; a database the CLI made has no job queue (it is
    # created, with the column, by the first `sleuth serve`)
    inspector = sa.inspect(op.get_bind())
    columns = (
        {c["name"] for c in inspector.get_columns("slack_jobs")}
        if inspector.has_table("slack_jobs")
        else None
    )
    if columns is not None and "unsolicited" not in columns:
        with op.batch_alter_table("slack_jobs") as batch:
            batch.add_column(sa.Column("unsolicited", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("slack_jobs") as batch:
        batch.drop_column("unsolicited")
    op.drop_table("channel_activity")
    op.drop_table("channel_settings")
