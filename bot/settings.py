"""All configuration: `SLEUTH_*` environment variables and an optional `.env`. Built once by the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.identity.linking import OAuthSourceConfig
from bot.status import STATUS_INTERVAL_S
from connectors.database import sqlite_url
from connectors.live_access import LiveCheckConfig
from graph_flows.config import FlowConfig, LLMLimits

DEFAULT_EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "acme"


class EmbedderConfig(BaseModel):
    kind: Literal["minilm", "hash", "openai"] = "minilm"
    precision: Literal["int8", "fp32"] = "int8"  # minilm: int8 model built once into data_dir/models
    base_url: str | None = None  # OpenAI-compatible embeddings endpoint (kind=openai)
    model: str | None = None
    api_key: SecretStr | None = None


class DigestConfig(BaseModel):
    """The weekly admin digest DM (`bot.digest`): SLEUTH_DIGEST__ENABLED=true, SLEUTH_DIGEST__WEEKDAY=0
    (Monday), SLEUTH_DIGEST__HOUR=9 (UTC), over the last SLEUTH_DIGEST__WINDOW_DAYS days."""

    enabled: bool = False
    weekday: int = Field(0, ge=0, le=6)
    hour: int = Field(9, ge=0, le=23)
    window_days: int = Field(7, ge=1)
    top: int = Field(5, ge=1, le=20)


class Settings(BaseSettings):
    """`extra="ignore"`: a `.env` is often shared with other tools, or holds the `JIRA_TOKEN` that
    `sleuth sources add --token-env JIRA_TOKEN` names, so keys that are not Sleuth's fields are left alone
    instead of stopping start-up with "Extra inputs are not permitted"."""

    model_config = SettingsConfigDict(
        env_prefix="SLEUTH_", env_file=".env", env_nested_delimiter="__", extra="ignore"
    )

    data_dir: Path = Path(".sleuth")
    database_url: str | None = None  # unset -> SQLite file in data_dir
    chroma_url: str | None = None  # unset -> embedded PersistentClient in data_dir/chroma
    chroma_token: SecretStr | None = None  # sent as `Authorization: Bearer` to the Chroma server
    chroma_database: str | None = None  # a database on the Chroma server (unset -> Chroma's default)
    embedder: EmbedderConfig = EmbedderConfig()
    examples_dir: Path = DEFAULT_EXAMPLES  # the embedded default source when no source is configured
    default_asker: str | None = None  # `sleuth ask/chat/whoami` without --as ask as this email
    permission_sync_interval_s: int = 600  # re-read sources' ACLs this often (content: per source, 1 h)
    # Slack's membership and channel events re-read the Slack sources' ACLs this long after the first one
    slack_event_permission_delay_s: float = Field(default=5.0, ge=0)
    # Slack's message events (edits, deletions, replies) sync the Slack sources' content this long after the
    # first one; off: only the scheduled sync, which still re-reads the threads they named
    slack_event_content_sync: bool = True
    slack_event_content_delay_s: float = Field(default=120.0, ge=0)
    flow: FlowConfig = FlowConfig()
    # before posting, each shown document is asked of its source with the asker's own linked token
    live_check: LiveCheckConfig = LiveCheckConfig()  # SLEUTH_LIVE_CHECK__DEADLINE_S=2

    # Slack
    slack_bot_token: SecretStr | None = None
    slack_app_token: SecretStr | None = None  # set -> Socket Mode
    slack_signing_secret: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"
    # The Slack app's OAuth client, for "Sign in with Slack" on sources whose links bind by Slack sign-in
    slack_client_id: str | None = None
    slack_client_secret: SecretStr | None = None
    slack_status_interval_s: float = (
        STATUS_INTERVAL_S  # at most one thread-status update per channel this often
    )
    slack_timeout_s: float = 15.0  # one Web API call; a lost response is retried (posts: looked up first)
    slack_stream_answers: bool = True  # stream answers (live drafts where safe), else post them
    job_lease_s: float = 15.0  # bot.jobs.DEFAULT_LEASE_S: a dead worker's job is taken over within this
    answer_bots: bool = False  # answer other bots' messages
    admin_users: list[str] = Field(default_factory=list)  # Slack user ids with admin rights in Sleuth
    digest: DigestConfig = DigestConfig()  # weekly admin DM; off unless SLEUTH_DIGEST__ENABLED=true
    insights_window_days: int = 14  # App Home feedback and `/sleuth gaps` look back this far
    public_url: str = "http://127.0.0.1:3000"  # where Slack and OAuth providers reach `sleuth serve`
    host: str = "127.0.0.1"
    port: int = 3000

    # Identity: sources whose permissions come from each user's own OAuth link (`/sleuth link <source>`)
    oauth_sources: list[OAuthSourceConfig] = Field(default_factory=list)  # SLEUTH_OAUTH_SOURCES='[{...}]'
    vault_key: SecretStr | None = None  # Fernet key(s), comma-separated for rotation
    production: bool = False  # refuse insecure defaults (no vault key)

    # LLM reasoner (unset -> offline rule reasoner). Model string `<provider>:<name>`: openai:gpt-4o-mini
    # (any OpenAI-compatible server with llm_base_url: vLLM, llama.cpp), ollama:qwen2.5:7b, anthropic:<name>
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm: LLMLimits = LLMLimits()  # SLEUTH_LLM__CONTEXT_TOKENS=8192, SLEUTH_LLM__MAX_OUTPUT_TOKENS=1500, ...

    @property
    def db_url(self) -> str:
        return self.database_url or sqlite_url(self.data_dir)

    @property
    def chroma_path(self) -> Path:
        return self.data_dir / "chroma"
