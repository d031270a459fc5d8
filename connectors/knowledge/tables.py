"""The store's SQL tables (SQLAlchemy Core): documents and their ACLs, chunks, graph edges, aliases, sync state.

Chroma holds the chunk vectors; everything a filter or a join needs lives here, so SQLite and PostgreSQL
deployments behave the same and several processes can share one store.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

from connectors.database import serial_id

# One MetaData for the store's tables, each declared column by column: neighbouring declarations look alike
# (sync_failures like aliases, a table's last columns and the next one's head), and stay so on purpose, since
# a declaration is read as the schema and Alembic compares each with the migrations.
metadata = MetaData()


def _document_ref(name: str, *, primary_key: bool = False) -> Column[str]:
    """A row that belongs to a document (its ACL entries, chunks, the edges and aliases read from it): it goes
    when the document goes. Indexed for the deletes and joins, unless it leads the primary key already."""
    keyed: dict[str, bool] = {"primary_key": True} if primary_key else {"nullable": False, "index": True}
    return Column(name, String, ForeignKey("documents.id", ondelete="CASCADE"), **keyed)


documents = Table(
    "documents",
    metadata,
    Column("id", String, primary_key=True),
    Column("source", String, nullable=False, index=True),
    Column("kind", String, nullable=False),
    Column("title", Text, nullable=False),
    Column("url", Text, nullable=False, default=""),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("version", String, nullable=False, default=""),
    Column("content_hash", String, nullable=False),
    Column("metadata_json", Text, nullable=False, default="{}"),
)

# One row per (document, principal): the ACL in a form every filter can join on.
doc_acl = Table(
    "doc_acl",
    metadata,
    _document_ref("doc_id", primary_key=True),
    Column("principal", String, primary_key=True),
    Index("ix_doc_acl_principal", "principal", "doc_id"),
)

chunks = Table(
    "chunks",
    metadata,
    Column("id", String, primary_key=True),  # "{doc_id}#{n}"
    Column("rowid_fts", Integer, nullable=False, unique=True),  # rowid in the FTS5 table
    _document_ref("doc_id"),
    Column("n", Integer, nullable=False),
    Column("text", Text, nullable=False),
)

# Typed edges. `target` is a document id, or a normalised name when `by_name` (resolved through `aliases` at
# read time, so a link to a document synced later, or an alias learned from a restricted page, resolves only
# for principals who may see it). `origin` is the document the edge was read from: its lineage.
edges = Table(
    "edges",
    metadata,
    serial_id(),
    Column("src", String, nullable=False, index=True),
    Column("target", String, nullable=False, index=True),
    Column("by_name", Boolean, nullable=False, default=False),
    Column("type", String, nullable=False),
    _document_ref("origin"),
    Column("derived", Boolean, nullable=False, default=False),  # found by mention mining, not by the source
    Column("weight", Float, nullable=False, default=1.0),
)

# Names of things: titles, ticket keys and declared aliases ("S-8", "Supplier 8"), each pointing at a document,
# each carrying the document it was learned from.
aliases = Table(
    "aliases",
    metadata,
    serial_id(),
    Column("norm", String, nullable=False, index=True),
    Column("name", Text, nullable=False),
    Column("target", String, nullable=False),
    _document_ref("origin"),
)

sync_state = Table(
    "sync_state",
    metadata,
    Column("source", String, primary_key=True),
    Column("cursor_json", Text, nullable=False, default="{}"),
    Column("last_started", DateTime(timezone=True)),
    Column("last_finished", DateTime(timezone=True)),
    Column("last_status", String, nullable=False, default="never"),
    Column("last_summary_json", Text, nullable=False, default="{}"),
)

# One row per failed item, declared like aliases above but a sync's record: nothing to cascade from.
sync_failures = Table(
    "sync_failures",
    metadata,
    serial_id(),
    Column("source", String, nullable=False, index=True),
    Column("item", String, nullable=False),
    Column("reason", Text, nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
)

# Chunks of each ACL group (`acl_key`: a digest of its principals) holding each lexical term, kept by every
# write (connectors.knowledge.term_counts): an asker's document frequency is the sum over the groups they see.
term_groups = Table(
    "lexical_term_groups",
    metadata,
    Column("term", String, primary_key=True),
    Column("acl_key", String(16), primary_key=True),
    Column("rows", Integer, nullable=False),
)

# A counter bumped on every write batch; read-side caches key on it.
store_meta = Table(
    "store_meta",
    metadata,
    Column("key", String, primary_key=True),
    Column("value", String, nullable=False),
)

# Themes (connectors.knowledge.themes): clusters of chunk vectors, each a hyperedge over its chunks. Only the
# membership and the centroid are stored; what a theme shows (label, terms) is derived at read time from the
# chunks the asker may see. A summary written by a model keeps the chunks it was written from (its lineage).
themes = Table(
    "themes",
    metadata,
    serial_id(),
    Column("centroid", LargeBinary, nullable=False),  # float32 unit vector
    Column("dirty", Boolean, nullable=False, default=False),  # lost chunks since its centroid was computed
    Column("summary", Text, nullable=False, default=""),
    Column("summary_sources", Text, nullable=False, default="[]"),  # chunk ids, JSON
    Column("summary_hash", String, nullable=False, default=""),  # of those chunks' texts when written
)

theme_members = Table(
    "theme_members",
    metadata,
    Column("chunk_id", String, primary_key=True),
    Column("theme_id", Integer, nullable=False, index=True),
    Column("doc_id", String, nullable=False, index=True),
)

# Entity hyperedges: the known names a chunk mentions, together (resolved through visible aliases at read time).
chunk_entities = Table(
    "chunk_entities",
    metadata,
    Column("chunk_id", String, primary_key=True),
    Column("norm", String, primary_key=True),
    Column("doc_id", String, nullable=False, index=True),
)
