"""Settings of one Google Drive connector: what to read (a shared drive or folders), as whom (a service account
with domain-wide delegation, or an admin's OAuth grant), and how link sharing and domains map to principals."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from connectors.sources.rest import OAuthSettings

DRIVE_SCOPE = "https://www.googleapis.com/auth/drive.readonly"
GROUP_MEMBER_SCOPE = "https://www.googleapis.com/auth/admin.directory.group.member.readonly"


class GoogleDriveConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    folders: list[str] = Field(default_factory=list)  # folder ids: each is read with everything beneath it
    shared_drive: str | None = None  # or a shared drive's id: every file in it
    domains: list[str] = Field(min_length=1)  # the Workspace's domains (acme.io): who `domain` shares reach
    treat_link_shared_as: Literal["nobody", "domain"] = "nobody"  # "anyone with the link" files
    service_account_key: SecretStr | None = None  # the service account's JSON key, as Google gives it
    delegated_user: str | None = None  # the admin the service account acts as (domain-wide delegation)
    oauth: OAuthSettings | None = None  # or an admin's OAuth grant, token kept in the token store
    expand_groups: bool = True  # read group members from the Admin SDK Directory API
    api_url: str = "https://www.googleapis.com"  # Drive v3 lives under /drive/v3
    directory_url: str = "https://admin.googleapis.com"  # Directory API under /admin/directory/v1
    token_url: str = "https://oauth2.googleapis.com/token"  # the service account's JWT-bearer exchange
    max_file_bytes: int = Field(default=10_000_000, ge=1)  # larger files are skipped (Drive exports 10 MB)
    page_size: int = Field(default=100, ge=1, le=1000)
    timeout: float = 30.0

    @field_validator("folders", "domains", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        """`--set folders=a,b` and the App Home modal give one string."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("domains")
    @classmethod
    def _lower(cls, value: list[str]) -> list[str]:
        return [domain.strip().lower().lstrip("@") for domain in value]

    @model_validator(mode="after")
    def _one_scope_one_auth(self) -> GoogleDriveConfig:
        if bool(self.folders) == bool(self.shared_drive):
            raise ValueError("pick either folders or one shared_drive")
        if (self.service_account_key is None) == (self.oauth is None):
            raise ValueError("configure either service_account_key (with delegated_user) or oauth")
        if self.service_account_key is not None and not self.delegated_user:
            raise ValueError("a service account needs delegated_user, the admin it acts as")
        return self

    @property
    def base_url(self) -> str:  # what `SourceClient` and the live check call the API root
        return self.api_url

    @property
    def scopes(self) -> tuple[str, ...]:
        return (DRIVE_SCOPE, GROUP_MEMBER_SCOPE) if self.expand_groups else (DRIVE_SCOPE,)
