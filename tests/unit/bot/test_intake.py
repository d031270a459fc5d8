"""Which deliveries are dropped unanswered, before any job exists."""

from __future__ import annotations

import pytest

from bot.intake import ignore_reason


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"team_id": "T1", "event_time": 1_000, "event": {"user": "U1"}}, None),
        ({"team_id": "T2", "event_time": 1_000, "event": {"user": "U1"}}, "another workspace"),
        ({"team": {"id": "T2"}, "type": "block_actions"}, "another workspace"),
        ({"team_id": "T1", "event_time": 1_000 - 3601, "event": {"user": "U1"}}, "stale event"),
        ({"team_id": "T1", "event_time": 1_000, "event": {"user": 5}}, "user of the wrong type"),
        ({"team_id": "T1", "event": {"message": {"user": ["U1"]}}}, "user of the wrong type"),
    ],
    ids=["ok", "other-team", "other-team-interactive", "stale", "user-int", "edited-user-list"],
)
def test_ignore_rules(body: dict, reason: str | None) -> None:
    assert ignore_reason(body, team="T1", now=1_000) == reason
