"""Confluence Cloud (REST v2) connector: pages with their hierarchy, links, labels and permissions."""

from __future__ import annotations

from connectors.sources.confluence.config import ConfluenceConfig
from connectors.sources.confluence.connector import ConfluenceConnector

__all__ = ["ConfluenceConfig", "ConfluenceConnector"]
