"""Finds connector classes through the `sleuth.connectors` entry-point group (built-ins register the same way)."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from connectors.base import Connector

GROUP = "sleuth.connectors"


class UnknownConnector(LookupError):
    pass


def connector_classes() -> dict[str, type[Any]]:
    """Every installed connector class by its kind name."""
    found: dict[str, type[Any]] = {}
    for ep in entry_points(group=GROUP):
        found[ep.name] = ep.load()
    return found


def build_connector(kind: str, name: str, config: dict[str, Any], **extra: Any) -> Connector:
    """Validates `config` against the connector's own pydantic model and builds it. Only this kind's module
    is imported (each HTTP connector brings its client stack; a folder source needs none of it)."""
    found = list(entry_points(group=GROUP, name=kind))
    if not found:
        installed = ", ".join(sorted(ep.name for ep in entry_points(group=GROUP)))
        raise UnknownConnector(f"no connector of kind {kind!r}; installed: {installed}")
    cls = found[0].load()
    parsed = cls.config_model.model_validate(config)
    return cls(parsed, name=name, **extra)
