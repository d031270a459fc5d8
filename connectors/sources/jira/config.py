"""Settings of one Jira Cloud connector (validated by the registry, built once by the CLI)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from connectors.sources.rest import OAuthSettings


class JiraConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: (
        str  # https://acme.atlassian.net (or the OAuth API root https://api.atlassian.com/ex/jira/<cloud id>)
    )
    projects: list[str] = Field(min_length=1)  # project keys
    email: str | None = None  # API-token auth: the account's email ...
    api_token: SecretStr | None = None  # ... and its token (HTTP Basic)
    oauth: OAuthSettings | None = None  # or OAuth 2.0 (3LO), token kept in the token store
    user_api_url: str | None = None  # where linked users' tokens are used; defaults to base_url
    confluence_url: str | None = None  # links into this wiki become Confluence page links
    page_size: int = Field(default=50, ge=1, le=5000)
    timeout: float = 30.0
