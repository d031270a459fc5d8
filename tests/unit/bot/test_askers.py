"""The asker's principals come from Slack's verified email; an OAuth source they have not linked earns them a
private nudge, never more permissions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from pydantic import SecretStr
from slack_sdk.errors import SlackApiError

from bot.askers import AskerDirectory, UnknownAsker
from bot.identity import OAuthSourceConfig


class FakeSlack:
    def users_info(self, user: str) -> dict[str, Any]:
        return {"user": {"id": user, "profile": {"email": "carol@acme.io"}}}


@dataclass
class FakeLink:
    source: str
    status: str


class FakeLinker:
    sources: ClassVar[list[OAuthSourceConfig]] = [
        OAuthSourceConfig(source="jira", client_id="c", client_secret=SecretStr("s"), authorize_url="http://x/a",
                          token_url="http://x/t", userinfo_url="http://x/u", display_name="Jira"),
        OAuthSourceConfig(source="github", client_id="c", client_secret=SecretStr("s"), authorize_url="http://x/a",
                          token_url="http://x/t", userinfo_url="http://x/u", display_name="GitHub"),
    ]  # fmt: skip

    def links(self, team: str, user: str) -> list[FakeLink]:
        return [FakeLink("jira", "active")]


class FakeResolver:
    def resolve(self, team: str, user: str, email: str | None) -> Any:
        @dataclass
        class Resolved:
            principals: frozenset[str] = frozenset({"user:carol@jira"})
            problems: tuple = ()

        return Resolved()


def test_unlinked_sources_get_a_private_nudge_and_no_principals() -> None:
    directory = AskerDirectory(
        FakeSlack(),  # type: ignore[arg-type]
        lambda email: frozenset({"public", f"user:{email}"}),
        FakeResolver(),  # type: ignore[arg-type]
        FakeLinker(),  # type: ignore[arg-type]
    )
    asker = directory.resolve("T1", "U1")
    assert asker.principals == {"public", "user:carol@acme.io", "user:carol@jira"}
    assert len(asker.notes) == 1 and "/sleuth link github" in asker.notes[0]


class CountingSlack:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.fail = False

    def users_info(self, user: str) -> dict[str, Any]:
        self.calls.append(user)
        if self.fail:
            raise SlackApiError("ratelimited", {"ok": False, "error": "ratelimited"})
        return {"user": {"id": user, "profile": {"email": f"{user.lower()}@acme.io"}}}


def test_users_info_is_cached_per_user_for_the_ttl_and_failures_are_not() -> None:
    now = [0.0]
    slack = CountingSlack()
    directory = AskerDirectory(
        slack, lambda email: frozenset({f"user:{email}"}), ttl_s=300, clock=lambda: now[0]
    )  # type: ignore[arg-type]

    directory.resolve("T1", "U1")
    directory.resolve("T1", "U1")
    directory.resolve("T1", "U2")
    assert slack.calls == ["U1", "U2"]

    now[0] = 301.0
    slack.fail = True
    with pytest.raises(UnknownAsker):
        directory.resolve("T1", "U1")
    slack.fail = False
    assert directory.resolve("T1", "U1").email == "u1@acme.io"
    assert slack.calls == ["U1", "U2", "U1", "U1"]
