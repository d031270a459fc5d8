"""Browser proofs for account links bound through Sign in with Slack (`"binding": "slack"` sources).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None
# Column by column, as Alembic writes it: a revision is frozen history, so it repeats the shape of the tables
# it creates (and of other revisions) instead of importing code that may change later. Duplicates on purpose.


def upgrade() -> None:
    op.create_table(
        "oauth_proofs",
        sa.Column("state_hash", sa.String(length=64), nullable=False),
        sa.Column("browser_hash", sa.String(length=64), nullable=False),
        sa.Column("proven", sa.Boolean(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("state_hash"),
        if_not_exists=True,
    )
    op.create_index(
        "ix_oauth_proofs_expires_at", "oauth_proofs", ["expires_at"], unique=False, if_not_exists=True
    )


def downgrade() -> None:
    op.drop_table("oauth_proofs")
