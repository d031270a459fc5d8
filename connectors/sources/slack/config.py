"""Settings of one Slack source: which channels, how far back, and how often Slack may be asked."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator


class SlackSourceConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    token: SecretStr  # the bot token (xoxb-...); Sleuth's own bot token works, with the scopes in docs/sources.md
    channels: list[
        str
    ] = []  # public channels to index, by id (C0123) or name (eng-help); the bot must be in them
    include_private: bool = True  # and every private channel the bot has been invited to
    initial_days: int | None = Field(default=None, ge=1)  # first sync reads this far back (None: everything)
    lookback_days: int = Field(
        default=14, ge=1
    )  # each sync re-reads this window for edits, replies, deletions
    base_url: str = "https://slack.com/api/"
    tier2_per_minute: int = Field(default=20, ge=1)  # conversations.list, users.list
    tier3_per_minute: int = Field(default=50, ge=1)  # conversations.history, conversations.replies
    page_size: int = Field(default=200, ge=1, le=1000)
    timeout: float = 30.0

    @field_validator("channels", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        """`--set channels=C1,eng-help` from the CLI arrives as one string."""
        if isinstance(value, str):
            return [part for part in (p.strip() for p in value.split(",")) if part]
        return value

    @field_validator("channels")
    @classmethod
    def _bare_names(cls, value: list[str]) -> list[str]:
        return [channel.strip().removeprefix("#") for channel in value if channel.strip()]

    @field_validator("base_url")
    @classmethod
    def _trailing_slash(cls, value: str) -> str:
        return value if value.endswith("/") else value + "/"
