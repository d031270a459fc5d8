"""What a gap's wording was derived from: the documents and the earlier askers (graph_flows.derived).

Revision ID: 0005_derived
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_derived"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if not inspector.has_table("gap_entries"):  # a database without a gap log gets it, newest, when it starts
        return
    present = {c["name"] for c in inspector.get_columns("gap_entries")}
    with op.batch_alter_table("gap_entries") as batch:
        for name in ("derived_from", "derived_askers"):
            if name not in present:
                batch.add_column(sa.Column(name, sa.Text(), nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("gap_entries") as batch:
        for name in ("derived_askers", "derived_from"):
            batch.drop_column(name)
