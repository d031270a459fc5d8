"""The emulator enforces OAuth scopes as Slack does: the default token carries the manifest's scopes, a method
without one of its scopes answers `missing_scope`, and every answer names the token's scopes in a header."""

from __future__ import annotations

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.manifest import bot_scopes, load_manifest
from bot.testing.slack_emulator import SlackEmulator


def test_the_default_token_carries_exactly_the_manifest_scopes() -> None:
    with SlackEmulator() as slack:
        response = WebClient(token=slack.bot_token, base_url=slack.api_url).auth_test()
    assert set(response.headers["x-oauth-scopes"].split(",")) == set(bot_scopes(load_manifest()))


def test_a_call_without_its_scope_answers_missing_scope() -> None:
    scopes = bot_scopes(load_manifest()) - {"channels:read", "groups:read", "mpim:read"}
    with SlackEmulator(scopes=scopes) as slack:
        slack.add_user("U1", "ann")
        slack.add_channel("C1", "eng", members=["U1"])
        client = WebClient(token=slack.bot_token, base_url=slack.api_url)
        with pytest.raises(SlackApiError) as raised:
            client.conversations_members(channel="C1")
        assert client.users_info(user="U1")["ok"]  # users:read is still granted
    body = raised.value.response.data
    assert body["error"] == "missing_scope"
    assert body["needed"] == "channels:read,groups:read,im:read,mpim:read"
    assert set(body["provided"].split(",")) == set(scopes)
    assert raised.value.response.headers["x-accepted-oauth-scopes"] == body["needed"]


def test_any_one_listed_scope_suffices() -> None:
    with SlackEmulator(scopes={"mpim:read"}) as slack:
        slack.add_channel("C1", "eng")
        members = WebClient(token=slack.bot_token, base_url=slack.api_url).conversations_members(channel="C1")
    assert members["members"] == [slack.bot_user_id]
