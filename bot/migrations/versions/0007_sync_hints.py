"""Items a source's next content sync must re-read (connectors.sync_hints): the threads Slack's message events
named as edited, deleted or replied to.

Revision ID: 0007_sync_hints
Revises: 0006_channels
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_sync_hints"
down_revision = "0006_channels"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # a new table: a database the CLI made, or one where the feature already created it, is migrated alike
    op.create_table(
        "sync_hints",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("source", sa.String(length=128), nullable=False),
        sa.Column("item", sa.String(length=255), nullable=False),
        sa.Column("noted_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        if_not_exists=True,
    )
    op.create_index("ix_sync_hints_source", "sync_hints", ["source"], if_not_exists=True)


def downgrade() -> None:
    op.drop_index("ix_sync_hints_source", table_name="sync_hints")
    op.drop_table("sync_hints")
