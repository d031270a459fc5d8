"""The folder source: markdown pages and tickets, JSON tickets, Jira CSV and Confluence HTML exports, and a
people file (see connector.py for how files are told apart)."""

from connectors.sources.folder.common import UnreadableItem
from connectors.sources.folder.connector import FolderConfig, FolderConnector

__all__ = ["FolderConfig", "FolderConnector", "UnreadableItem"]
