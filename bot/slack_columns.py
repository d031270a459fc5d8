"""Column kinds of the tables that record Slack things (jobs, feedback, digests, a user's tokens, links and OAuth
states): how long a Slack id or message timestamp may be is said here once, and Alembic compares each table
that uses them with the migrations as usual.
"""

from __future__ import annotations

from sqlalchemy import Column, String

SLACK_ID_CHARS = 64  # team, channel and user ids ("T0123ABCD"): Slack's are 9 to 11 characters today
SLACK_TS_CHARS = 32  # message timestamps ("1718040000.000100")


def slack_id(name: str, *, primary_key: bool = False) -> Column[str]:
    """A Slack team, channel or user id; always present."""
    return Column(name, String(SLACK_ID_CHARS), primary_key=primary_key, nullable=False)


def slack_ts(name: str, *, nullable: bool = True) -> Column[str]:
    """A Slack message timestamp: with the channel, the id of a message."""
    return Column(name, String(SLACK_TS_CHARS), nullable=nullable)


def owner_columns(*, primary_key: bool) -> list[Column[str]]:
    """Whose row it is: (team, user, source), the key of a user's token in the vault and of their links and
    OAuth states."""
    return [
        slack_id("team", primary_key=primary_key),
        slack_id("user", primary_key=primary_key),
        Column("source", String(128), primary_key=primary_key, nullable=False),
    ]
