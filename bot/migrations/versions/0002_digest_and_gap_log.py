"""The admin digest's claims and the gap log, which moved from files into the database.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None
# Column by column, as Alembic writes it: a revision is frozen history, so it repeats the shape of the tables
# it creates (and of other revisions) instead of importing code that may change later. Duplicates on purpose.


def upgrade() -> None:
    op.create_table(
        "admin_digests",
        sa.Column("period", sa.String(length=16), nullable=False),
        sa.Column("admin", sa.String(length=64), nullable=False),
        sa.Column("claimed_by", sa.String(length=128), nullable=False),
        sa.Column("claimed_at", sa.Float(), nullable=False),
        sa.Column("sent_at", sa.Float(), nullable=True),
        sa.UniqueConstraint("period", "admin", name="uq_admin_digests_period_admin"),
        if_not_exists=True,
    )
    op.create_table(
        "gap_entries",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("what", sa.Text(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("asker", sa.String(length=320), nullable=False),
        sa.Column("thread", sa.String(length=200), nullable=False),
        sa.Column("closest", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        if_not_exists=True,
    )
    op.create_index("ix_gap_entries_asker", "gap_entries", ["asker"], unique=False, if_not_exists=True)
    op.create_index("ix_gap_entries_at", "gap_entries", ["at"], unique=False, if_not_exists=True)


def downgrade() -> None:
    op.drop_table("gap_entries")
    op.drop_table("admin_digests")
