"""The source catalog: configs validated by the connector's own model, secrets kept in the vault only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr
from sqlalchemy import select

from connectors.catalog import DuplicateSource, SourceCatalog, sources
from connectors.database import make_engine


class MemorySecrets:
    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def put_secret(self, name: str, value: str | SecretStr) -> None:
        self.values[name] = value.get_secret_value() if isinstance(value, SecretStr) else value

    def get_secret(self, name: str) -> SecretStr | None:
        return SecretStr(self.values[name]) if name in self.values else None

    def delete_secret(self, name: str) -> bool:
        return self.values.pop(name, None) is not None


@pytest.fixture
def catalog(tmp_path: Path) -> tuple[SourceCatalog, MemorySecrets]:
    secrets = MemorySecrets()
    return SourceCatalog(make_engine(f"sqlite:///{tmp_path / 'c.db'}"), secrets), secrets


def test_secrets_go_to_the_vault_and_come_back_only_to_build_the_connector(catalog) -> None:  # type: ignore[no-untyped-def]
    cat, secrets = catalog
    cat.add(
        "jira",
        "jira",
        {
            "base_url": "https://acme.example.test",
            "projects": ["ENG"],
            "email": "a@acme.io",
            "api_token": "tok-123",
        },
    )
    with cat.engine.connect() as conn:
        stored = conn.execute(select(sources.c.config_json)).scalar()
    assert "tok-123" not in stored
    assert json.loads(stored)["api_token"] == {"$secret": "source:jira:api_token"}
    assert secrets.values == {"source:jira:api_token": "tok-123"}
    connector = cat.connector(cat.get("jira"))  # type: ignore[arg-type]
    assert connector.kind == "jira"
    assert cat.remove("jira") and secrets.values == {}


def test_bad_configs_are_refused_with_the_models_message(catalog) -> None:  # type: ignore[no-untyped-def]
    cat, _ = catalog
    with pytest.raises(ValueError, match="projects"):
        cat.add("jira", "jira", {"base_url": "https://x"})
    with pytest.raises(ValueError, match="unknown source kind"):
        cat.add("x", "sharepoint", {})
    cat.add("docs", "folder", {"path": "/tmp"})
    with pytest.raises(DuplicateSource):
        cat.add("docs", "folder", {"path": "/tmp"})
