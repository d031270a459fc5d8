"""The configured sources: kind, name, validated config, sync interval. Admins add them from Slack or the CLI.

Secrets never live here: a connector config's `SecretStr` fields are stored in the token vault by the caller and
referenced by name. With no source configured, the embedded default (a folder source on the examples) is used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import BaseModel, SecretStr
from sqlalchemy import (
    Column,
    DateTime,
    Engine,
    Integer,
    String,
    Text,
    delete,
    insert,
    select,
)

from connectors.base import Connector
from connectors.database import create_tables, owned_table
from connectors.registry import build_connector, connector_classes

SECRET_REF = "$secret"  # what the catalog stores in place of a secret: {"$secret": "<vault name>"}


class SecretStore(Protocol):
    """Where secrets entered by admins go (the encrypted vault); the catalog keeps only references."""

    def put_secret(self, name: str, value: str | SecretStr) -> None: ...

    def get_secret(self, name: str) -> SecretStr | None: ...

    def delete_secret(self, name: str) -> bool: ...


sources = owned_table(
    "sources",
    Column("name", String, primary_key=True),
    Column("kind", String, nullable=False),
    Column("config_json", Text, nullable=False),
    Column("interval_s", Integer, nullable=False, default=3600),
    Column("added_by", String, nullable=False, default=""),
    Column("added_at", DateTime(timezone=True), nullable=False),
)


@dataclass(frozen=True)
class SourceEntry:
    name: str
    kind: str
    config: dict[str, Any]
    interval_s: int
    added_by: str


class DuplicateSource(ValueError):
    pass


class SourceCatalog:
    def __init__(self, engine: Engine, secrets: SecretStore | None = None) -> None:
        self.engine = engine
        self.secrets = secrets
        create_tables(sources.metadata, engine)

    def add(
        self, name: str, kind: str, config: dict[str, Any], *, interval_s: int = 3600, added_by: str = ""
    ) -> SourceEntry:
        if not name or not name.replace("-", "").replace("_", "").isalnum():
            raise ValueError("a source name is letters, digits, '-' or '_'")
        classes = connector_classes()
        if kind not in classes:
            raise ValueError(f"unknown source kind {kind!r}; installed: {', '.join(sorted(classes))}")
        parsed = classes[kind].config_model.model_validate(config)  # fail early, with the model's message
        plain = self._store_secrets(name, parsed)
        with self.engine.begin() as conn:
            if conn.execute(select(sources.c.name).where(sources.c.name == name)).first():
                raise DuplicateSource(f"a source named {name!r} exists")
            conn.execute(
                insert(sources).values(
                    name=name,
                    kind=kind,
                    config_json=json.dumps(plain),
                    interval_s=interval_s,
                    added_by=added_by,
                    added_at=datetime.now(UTC),
                )
            )
        return SourceEntry(name, kind, plain, interval_s, added_by)

    def remove(self, name: str) -> bool:
        entry = self.get(name)
        if entry is not None and self.secrets is not None:
            for ref in _secret_refs(entry.config):
                self.secrets.delete_secret(ref)
        with self.engine.begin() as conn:
            return bool(conn.execute(delete(sources).where(sources.c.name == name)).rowcount)

    def entries(self) -> list[SourceEntry]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(sources).order_by(sources.c.name)).all()
        return [
            SourceEntry(r.name, r.kind, json.loads(r.config_json), r.interval_s, r.added_by) for r in rows
        ]

    def get(self, name: str) -> SourceEntry | None:
        return next((e for e in self.entries() if e.name == name), None)

    def connector(self, entry: SourceEntry, **extra: Any) -> Connector:
        return build_connector(entry.kind, entry.name, self._with_secrets(entry.config), **extra)

    def _store_secrets(self, name: str, parsed: BaseModel) -> dict[str, Any]:
        """The config as JSON, each secret swapped for a reference to the vault (never stored in clear)."""
        plain: dict[str, Any] = json.loads(parsed.model_dump_json())
        for field, value in parsed:
            if isinstance(value, SecretStr):
                if self.secrets is None:
                    raise ValueError(f"{field} is a secret and no vault is configured")
                ref = f"source:{name}:{field}"
                self.secrets.put_secret(ref, value)
                plain[field] = {SECRET_REF: ref}
        return plain

    def _with_secrets(self, config: dict[str, Any]) -> dict[str, Any]:
        out = dict(config)
        for field, value in config.items():
            if isinstance(value, dict) and SECRET_REF in value:
                secret = self.secrets.get_secret(value[SECRET_REF]) if self.secrets else None
                out[field] = secret.get_secret_value() if secret else None
        return out


def _secret_refs(config: dict[str, Any]) -> list[str]:
    return [v[SECRET_REF] for v in config.values() if isinstance(v, dict) and SECRET_REF in v]
