"""The asker's principals come from Slack's verified email; an OAuth source they have not linked earns them a
private nudge, never more permissions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import SecretStr

from bot.askers import AskerDirectory
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
