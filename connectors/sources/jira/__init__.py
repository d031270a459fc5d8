"""Jira Cloud (REST v3) connector: issues as tickets, their links, comments and permissions."""

from __future__ import annotations

from connectors.sources.jira.config import JiraConfig
from connectors.sources.jira.connector import JiraConnector

__all__ = ["JiraConfig", "JiraConnector"]
