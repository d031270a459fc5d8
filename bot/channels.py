"""Per-channel setup: how Sleuth answers in a channel, from which sources, and whom it brings in.

An admin sets a channel's settings in App Home or with `sleuth channels set`; the default (channel `*`) applies
to every channel without its own, and without either a channel behaves as Sleuth always has (answers when
mentioned, from every source). DMs and `/sleuth ask` are never configured: the asker is the only audience.

- `answer`: `mention` (answer when mentioned), `questions` (also answer top-level messages that read as
  questions, without a mention: `bot.help_channel`), `off` (answer nothing in the channel).
- `sources`: the sources, or parts of them (`acme/wiki/hr`, `jira/ENG`, `wiki/OPS`), answers may read; empty
  means all. The asker's permissions apply on top (`graph_flows.scope`).
- `post_only_when_confident`: in `questions` mode, an unsolicited question Sleuth cannot answer gets no reply.
- `escalate_to`: users (`U...`) and user groups (`S...`) the "Get help from a person" button pings.
- `reply`: `thread` (default) or `ephemeral` (only the asker sees the answer).

Settings are keyed by channel id alone: Sleuth is installed in one workspace (`bot.intake.ignore_reason`).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator
from sqlalchemy import Column, DateTime, Engine, Text, delete, insert, select

from bot.slack_columns import slack_id
from connectors.database import create_tables, owned_table

AnswerMode = Literal["mention", "questions", "off"]
ReplyMode = Literal["thread", "ephemeral"]
DEFAULT_CHANNEL = "*"
_PERSON_OR_GROUP = re.compile(r"^[UWS][A-Z0-9]{2,}$")
_SOURCE_ENTRY = re.compile(r"^[A-Za-z0-9_.-]+(/[^\s/][^\s]*)?$")

channel_settings = owned_table(
    "channel_settings",
    slack_id("channel", primary_key=True),  # a channel id, or "*" for the default
    Column("config", Text, nullable=False),  # ChannelConfig as JSON
    slack_id("set_by"),
    Column("set_at", DateTime(timezone=True), nullable=False),
)


class ChannelConfig(BaseModel):
    """One channel's settings; the defaults are today's behaviour."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    answer: AnswerMode = "mention"
    sources: tuple[str, ...] = ()
    post_only_when_confident: bool = False
    escalate_to: tuple[str, ...] = ()
    reply: ReplyMode = "thread"

    @field_validator("sources")
    @classmethod
    def _sources(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        entries = tuple(dict.fromkeys(v.strip().strip("/") for v in value if v.strip()))
        bad = [e for e in entries if not _SOURCE_ENTRY.match(e)]
        if bad:
            raise ValueError(f"a source is `name` or `name/part`, not {bad[0]!r}")
        return entries

    @field_validator("escalate_to")
    @classmethod
    def _escalate_to(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        entries = tuple(dict.fromkeys(_slack_ref(v) for v in value if v.strip()))
        bad = [e for e in entries if not _PERSON_OR_GROUP.match(e)]
        if bad:
            raise ValueError(f"escalate to user ids (U...) or user group ids (S...), not {bad[0]!r}")
        return entries

    @property
    def scope(self) -> list[str] | None:
        """The source scope of the channel's answers (None: every source)."""
        return list(self.sources) or None

    def summary(self) -> str:
        """One line for `sleuth channels list` and App Home."""
        parts = [f"answer={self.answer}", f"reply={self.reply}"]
        parts.append("sources=" + (",".join(self.sources) or "all"))
        if self.post_only_when_confident:
            parts.append("post_only_when_confident")
        if self.escalate_to:
            parts.append("escalate_to=" + ",".join(self.escalate_to))
        return " ".join(parts)


def _slack_ref(value: str) -> str:
    """`<@U123>`, `<!subteam^S123|@eng>` or a bare id -> the id."""
    found = re.match(r"^<(?:@|!subteam\^)([A-Z0-9]+)(?:\|[^>]*)?>$", value.strip())
    return found.group(1) if found else value.strip()


def mention_of(ref: str) -> str:
    """How a user or group id is written to ping it."""
    return f"<!subteam^{ref}>" if ref.startswith("S") else f"<@{ref}>"


class ChannelSettings:
    """Channel settings in the shared database; each call is one short transaction."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        create_tables(channel_settings.metadata, engine)

    def own(self, channel: str) -> ChannelConfig | None:
        """The channel's own settings (or the default's, for `*`), None when it has none."""
        with self._engine.connect() as conn:
            raw = conn.execute(
                select(channel_settings.c.config).where(channel_settings.c.channel == channel)
            ).scalar()
        return ChannelConfig.model_validate(json.loads(raw)) if raw else None

    def for_channel(self, channel: str) -> ChannelConfig:
        """What applies in a channel: its own settings, else the default, else today's behaviour; a DM has
        none."""
        if channel.startswith("D"):
            return ChannelConfig()
        with self._engine.connect() as conn:
            rows = dict(
                conn.execute(
                    select(channel_settings.c.channel, channel_settings.c.config).where(
                        channel_settings.c.channel.in_([channel, DEFAULT_CHANNEL])
                    )
                ).all()
            )
        raw = rows.get(channel) or rows.get(DEFAULT_CHANNEL)
        return ChannelConfig.model_validate(json.loads(raw)) if raw else ChannelConfig()

    def set(self, channel: str, config: ChannelConfig, *, by: str) -> None:
        with self._engine.begin() as conn:
            conn.execute(delete(channel_settings).where(channel_settings.c.channel == channel))
            conn.execute(
                insert(channel_settings).values(
                    channel=channel, config=config.model_dump_json(), set_by=by, set_at=datetime.now(UTC)
                )
            )

    def unset(self, channel: str) -> bool:
        """Removes the channel's own settings (it falls back to the default); False when it had none."""
        with self._engine.begin() as conn:
            gone = conn.execute(delete(channel_settings).where(channel_settings.c.channel == channel))
        return bool(gone.rowcount)

    def all(self) -> dict[str, ChannelConfig]:
        """Every configured channel (and `*`), by id."""
        with self._engine.connect() as conn:
            rows = conn.execute(
                select(channel_settings.c.channel, channel_settings.c.config).order_by(
                    channel_settings.c.channel
                )
            ).all()
        return {channel: ChannelConfig.model_validate(json.loads(raw)) for channel, raw in rows}

    def answering_questions(self) -> list[str]:
        """The channels set to answer questions without a mention (for `doctor --slack`); `*` included when
        the default does."""
        return [channel for channel, config in self.all().items() if config.answer == "questions"]
