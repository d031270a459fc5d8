"""`sleuth doctor --slack` names each channel set to answer questions that Sleuth is not a member of."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from bot.channel_doctor import check_question_channels
from bot.channels import DEFAULT_CHANNEL
from bot.settings import Settings
from bot.testing.slack_emulator import SlackEmulator


@pytest.fixture
def slack() -> Iterator[SlackEmulator]:
    with SlackEmulator() as emulator:
        emulator.add_user("U0ANN", "ann")
        emulator.add_channel("C0IN", "it-help", members=["U0ANN", emulator.bot_user_id])
        emulator.add_channel("C0OUT", "people-ops", members=["U0ANN"], bot_member=False)
        yield emulator


def test_a_questions_channel_without_sleuth_fails_with_the_invite(slack: SlackEmulator) -> None:
    settings = Settings(
        _env_file=None, slack_bot_token=SecretStr(slack.bot_token), slack_api_url=slack.api_url
    )

    checks = check_question_channels(settings, ["C0IN", "C0OUT", "C0GONE", DEFAULT_CHANNEL])

    by_name = {c.name: c for c in checks}
    assert set(by_name) == {"channel C0IN", "channel C0OUT", "channel C0GONE"}  # the default has no members
    assert by_name["channel C0IN"].status == "ok"
    assert by_name["channel C0OUT"].status == "fail" and "/invite @Sleuth" in by_name["channel C0OUT"].fix
    assert "#people-ops" in by_name["channel C0OUT"].detail
    assert (
        by_name["channel C0GONE"].status == "fail" and "channel_not_found" in by_name["channel C0GONE"].detail
    )
