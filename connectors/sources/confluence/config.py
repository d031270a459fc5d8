"""Settings of one Confluence Cloud connector."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from connectors.sources.rest import OAuthSettings


class ConfluenceConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str  # the site root, https://acme.atlassian.net (the API lives under /wiki)
    spaces: list[str] = Field(min_length=1)  # space keys
    email: str | None = None  # API-token auth: the account's email ...
    api_token: SecretStr | None = None  # ... and its token (HTTP Basic)
    oauth: OAuthSettings | None = None  # or OAuth 2.0 (3LO), token kept in the token store
    user_api_url: str | None = None  # where linked users' tokens are used; defaults to base_url
    page_size: int = Field(default=25, ge=1, le=250)
    timeout: float = 30.0
