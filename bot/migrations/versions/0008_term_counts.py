"""Per-term, per-ACL-group chunk counts kept at write time (connectors.knowledge.term_counts): an asker's
document frequencies are read for the groups they may see alone, never counted from a term's postings.

The table starts empty and the store's `term_counts` mark is cleared: the first store to open counts every
chunk once. A database the CLI made may have no store tables yet; the table is created all the same.

Revision ID: 0008_term_counts
Revises: 0007_sync_hints
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_term_counts"
down_revision = "0007_sync_hints"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "lexical_term_groups",
        sa.Column("term", sa.String(), nullable=False),
        sa.Column("acl_key", sa.String(length=16), nullable=False),
        sa.Column("rows", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("term", "acl_key"),
        if_not_exists=True,
    )
    _forget_counts()


def downgrade() -> None:
    op.drop_table("lexical_term_groups")
    _forget_counts()


def _forget_counts() -> None:
    """Counts made by another revision's code may be missing rows: the store counts again when it opens."""
    if sa.inspect(op.get_bind()).has_table("store_meta"):
        op.execute(sa.text("DELETE FROM store_meta WHERE key = 'term_counts'"))
