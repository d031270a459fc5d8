"""What Alembic compares: every table but the lexical index, which is raw DDL per dialect (FTS5 virtual tables,
a tsvector table), not part of the metadata."""

from __future__ import annotations

LEXICAL_PREFIXES = ("chunks_fts", "chunks_tsv")


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    return not (type_ == "table" and name is not None and name.startswith(LEXICAL_PREFIXES))
