"""GitHub connector: issues and pull requests of configured repositories, their references and access."""

from __future__ import annotations

from connectors.sources.github.config import GitHubConfig
from connectors.sources.github.connector import GitHubConnector

__all__ = ["GitHubConfig", "GitHubConnector"]
