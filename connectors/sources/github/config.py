"""Settings of one GitHub connector."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from connectors.sources.rest import OAuthSettings


class GitHubConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str = "https://api.github.com"  # GitHub Enterprise: https://ghe.example.com/api/v3
    repos: list[str] = Field(min_length=1)  # "owner/repo"
    token: SecretStr | None = None  # a personal access token or app installation token (Bearer)
    oauth: OAuthSettings | None = None  # or OAuth 2.0, token kept in the token store
    user_api_url: str | None = None  # where linked users' tokens are used; defaults to base_url
    include_pr_commits: bool = False  # one more request per pull request
    page_size: int = Field(default=100, ge=1, le=100)
    timeout: float = 30.0

    @field_validator("repos")
    @classmethod
    def _owner_slash_repo(cls, value: list[str]) -> list[str]:
        for repo in value:
            if repo.count("/") != 1 or not all(repo.split("/")):
                raise ValueError(f"repositories are 'owner/repo', got {repo!r}")
        return [repo.lower() for repo in value]
