"""Themes above entities (the broad-question path): themes, their member chunks, and each chunk's entities.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None
# Column by column, as Alembic writes it: a revision is frozen history, so it repeats the shape of the tables
# it creates (and of other revisions) instead of importing code that may change later. Duplicates on purpose.


def upgrade() -> None:
    op.create_table(
        "chunk_entities",
        sa.Column("chunk_id", sa.String(), nullable=False),
        sa.Column("norm", sa.String(), nullable=False),
        sa.Column("doc_id", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("chunk_id", "norm"),
        if_not_exists=True,
    )
    op.create_index(
        "ix_chunk_entities_doc_id", "chunk_entities", ["doc_id"], unique=False, if_not_exists=True
    )
    op.create_table(
        "theme_members",
        sa.Column("chunk_id", sa.String(), nullable=False),
        sa.Column("theme_id", sa.Integer(), nullable=False),
        sa.Column("doc_id", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("chunk_id"),
        if_not_exists=True,
    )
    op.create_index("ix_theme_members_doc_id", "theme_members", ["doc_id"], unique=False, if_not_exists=True)
    op.create_index(
        "ix_theme_members_theme_id", "theme_members", ["theme_id"], unique=False, if_not_exists=True
    )
    op.create_table(
        "themes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("centroid", sa.LargeBinary(), nullable=False),
        sa.Column("dirty", sa.Boolean(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("summary_sources", sa.Text(), nullable=False),
        sa.Column("summary_hash", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        if_not_exists=True,
    )


def downgrade() -> None:
    for table in ("themes", "theme_members", "chunk_entities"):
        op.drop_table(table)
