"""Channel settings: validated, stored, with the default applying to channels without their own."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sqlalchemy import create_engine

from bot.channel_activity import ANSWERED, ESCALATED, SEEN, ChannelActivity, week_of
from bot.channels import DEFAULT_CHANNEL, ChannelConfig, ChannelSettings, mention_of


def test_a_channel_uses_its_own_then_the_default_then_todays_behaviour() -> None:
    store = ChannelSettings(create_engine("sqlite://"))
    assert store.for_channel("C1") == ChannelConfig() and ChannelConfig().answer == "mention"
    store.set(DEFAULT_CHANNEL, ChannelConfig(reply="ephemeral"), by="U0ADMIN")
    store.set("C1", ChannelConfig(answer="questions", sources=("acme/wiki/hr/",)), by="U0ADMIN")

    assert store.for_channel("C1").sources == ("acme/wiki/hr",) and store.for_channel("C1").reply == "thread"
    assert store.for_channel("C2").reply == "ephemeral"
    assert store.for_channel("D1") == ChannelConfig()  # a DM is never configured
    assert store.answering_questions() == ["C1"]
    assert store.unset("C1") and not store.unset("C1") and store.for_channel("C1").reply == "ephemeral"


@pytest.mark.parametrize(
    "fields",
    [
        {"answer": "sometimes"},
        {"reply": "dm"},
        {"escalate_to": ["eng-helpers"]},
        {"sources": ["a b"]},
        {"surprise": True},
    ],
    ids=["answer", "reply", "escalate-name", "source-space", "unknown-field"],
)
def test_bad_settings_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ChannelConfig.model_validate(fields)


def test_escalation_targets_are_read_from_slack_mentions() -> None:
    config = ChannelConfig(escalate_to=("<!subteam^S0HELP|@helpers>", "<@U0DANA>", "U0DANA"))
    assert config.escalate_to == ("S0HELP", "U0DANA")
    assert [mention_of(r) for r in config.escalate_to] == ["<!subteam^S0HELP>", "<@U0DANA>"]


def test_activity_is_recorded_once_per_thread_and_counted_by_week() -> None:
    now = [1_767_268_800.0]  # Thursday 2026-01-01
    activity = ChannelActivity(create_engine("sqlite://"), clock=lambda: now[0])
    assert activity.record("C1", "1.1", SEEN, user="U1") and activity.record(
        "C1", "1.1", ESCALATED, user="U2"
    )
    assert not activity.record("C1", "1.1", ESCALATED, user="U3")  # escalated once per thread
    now[0] += 7 * 86400
    activity.record("C1", "2.2", ANSWERED, user="U1")

    weekly = activity.weekly()
    assert week_of(1_767_268_800.0) == "2025-12-29"
    assert weekly[("2025-12-29", "C1")][SEEN] == 1 and weekly[("2025-12-29", "C1")][ESCALATED] == 1
    assert weekly[("2026-01-05", "C1")][ANSWERED] == 1
