"""Baseline: every table Sleuth kept when migrations began, and the lexical index of the database's kind
(an FTS5 virtual table on SQLite; a tsvector table under a GIN index on PostgreSQL).

A database made before migrations (tables created by the stores themselves) is stamped at this revision by
`bot.schema.upgrade` instead of running it.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None
# Column by column, as Alembic writes it: a revision is frozen history, so it repeats the shape of the tables
# it creates (and of other revisions) instead of importing code that may change later. Duplicates on purpose.

SQLITE_LEXICAL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts "
    "USING fts5(title, body, tokenize = 'porter unicode61 remove_diacritics 2')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts_terms USING fts5vocab(chunks_fts, 'instance')",
)
POSTGRES_LEXICAL = (
    "CREATE TABLE IF NOT EXISTS chunks_tsv (rowid_fts BIGINT PRIMARY KEY, tsv TSVECTOR NOT NULL, "
    "length INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS ix_chunks_tsv_tsv ON chunks_tsv USING GIN (tsv)",
)


def upgrade() -> None:
    op.create_table(
        "oauth_states",
        sa.Column("state_hash", sa.String(length=64), nullable=False),
        sa.Column("team", sa.String(length=64), nullable=False),
        sa.Column("user", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=128), nullable=False),
        sa.Column("verifier_ct", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("state_hash"),
    )
    op.create_index(op.f("ix_oauth_states_expires_at"), "oauth_states", ["expires_at"], unique=False)
    op.create_table(
        "oauth_links",
        sa.Column("team", sa.String(length=64), nullable=False),
        sa.Column("user", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=128), nullable=False),
        sa.Column("account", sa.String(length=320), nullable=False),
        sa.Column("groups", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("linked_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("team", "user", "source"),
    )
    op.create_table(
        "slack_jobs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("team", sa.String(length=64), nullable=False),
        sa.Column("event_id", sa.String(length=128), nullable=False),
        sa.Column("message_key", sa.String(length=256), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("message_ts", sa.String(length=32), nullable=True),
        sa.Column("thread_ts", sa.String(length=32), nullable=True),
        sa.Column("user", sa.String(length=64), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("trace_id", sa.String(length=40), nullable=False),
        sa.Column("response_url", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("claimed_by", sa.String(length=128), nullable=True),
        sa.Column("lease_until", sa.Float(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("placeholder_ts", sa.String(length=32), nullable=True),
        sa.Column("acked_at", sa.Float(), nullable=True),
        sa.Column("ack_queued", sa.Integer(), server_default="0", nullable=False),
        sa.Column("failing_since", sa.Float(), nullable=True),
        sa.Column("result", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("finished_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("team", "event_id", name="uq_slack_jobs_event"),
        sa.UniqueConstraint("team", "message_key", name="uq_slack_jobs_message"),
        sa.UniqueConstraint("trace_id"),
    )
    op.create_index("ix_slack_jobs_message", "slack_jobs", ["team", "channel", "message_ts"], unique=False)
    op.create_index("ix_slack_jobs_status", "slack_jobs", ["status", "lease_until"], unique=False)
    op.create_index("ix_slack_jobs_thread", "slack_jobs", ["team", "channel", "thread_ts"], unique=False)
    op.create_table(
        "slack_feedback",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("team", sa.String(length=64), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("message_ts", sa.String(length=32), nullable=False),
        sa.Column("thread_id", sa.String(length=200), nullable=False),
        sa.Column("trace_id", sa.String(length=40), nullable=False),
        sa.Column("user", sa.String(length=64), nullable=False),
        sa.Column("value", sa.String(length=16), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_slack_feedback_trace_id"), "slack_feedback", ["trace_id"], unique=False)
    op.create_table(
        "channel_policies",
        sa.Column("team", sa.String(), nullable=False),
        sa.Column("channel", sa.String(), nullable=False),
        sa.Column("policy", sa.String(), nullable=False),
        sa.Column("set_by", sa.String(), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("team", "channel"),
    )
    op.create_table(
        "vault_secrets",
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("ciphertext", sa.LargeBinary(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "vault_tokens",
        sa.Column("team", sa.String(length=64), nullable=False),
        sa.Column("user", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=128), nullable=False),
        sa.Column("ciphertext", sa.LargeBinary(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("team", "user", "source"),
    )
    op.create_table(
        "leases",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("holder", sa.String(length=128), nullable=False),
        sa.Column("until", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "documents",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.String(), nullable=False),
        sa.Column("content_hash", sa.String(), nullable=False),
        sa.Column("metadata_json", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_documents_source"), "documents", ["source"], unique=False)
    op.create_table(
        "store_meta",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_table(
        "sync_failures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("item", sa.String(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_sync_failures_source"), "sync_failures", ["source"], unique=False)
    op.create_table(
        "sync_state",
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("cursor_json", sa.Text(), nullable=False),
        sa.Column("last_started", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_finished", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_status", sa.String(), nullable=False),
        sa.Column("last_summary_json", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("source"),
    )
    op.create_table(
        "aliases",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("norm", sa.String(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("target", sa.String(), nullable=False),
        sa.Column("origin", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["origin"], ["documents.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_aliases_norm"), "aliases", ["norm"], unique=False)
    op.create_index(op.f("ix_aliases_origin"), "aliases", ["origin"], unique=False)
    op.create_table(
        "chunks",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("rowid_fts", sa.Integer(), nullable=False),
        sa.Column("doc_id", sa.String(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["doc_id"], ["documents.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("rowid_fts"),
    )
    op.create_index(op.f("ix_chunks_doc_id"), "chunks", ["doc_id"], unique=False)
    op.create_table(
        "doc_acl",
        sa.Column("doc_id", sa.String(), nullable=False),
        sa.Column("principal", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["doc_id"], ["documents.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("doc_id", "principal"),
    )
    op.create_index("ix_doc_acl_principal", "doc_acl", ["principal", "doc_id"], unique=False)
    op.create_table(
        "edges",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("src", sa.String(), nullable=False),
        sa.Column("target", sa.String(), nullable=False),
        sa.Column("by_name", sa.Boolean(), nullable=False),
        sa.Column("type", sa.String(), nullable=False),
        sa.Column("origin", sa.String(), nullable=False),
        sa.Column("derived", sa.Boolean(), nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["origin"], ["documents.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_edges_origin"), "edges", ["origin"], unique=False)
    op.create_index(op.f("ix_edges_src"), "edges", ["src"], unique=False)
    op.create_index(op.f("ix_edges_target"), "edges", ["target"], unique=False)
    op.create_table(
        "sources",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("config_json", sa.Text(), nullable=False),
        sa.Column("interval_s", sa.Integer(), nullable=False),
        sa.Column("added_by", sa.String(), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )

    dialect = op.get_bind().dialect.name
    for statement in {"sqlite": SQLITE_LEXICAL, "postgresql": POSTGRES_LEXICAL}.get(dialect, ()):
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("the baseline is not undone: restore a backup instead")
