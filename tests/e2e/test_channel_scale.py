"""Under the `channel` policy every member's identity is looked up; in a large channel with many questions at
once that must stay within Slack's rate limits: one `users.info` per member per cache TTL, one member walk."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from bot.answering import NO_IDENTITY
from bot.testing.slack_render import format_message
from tests.e2e.conftest import EnvFactory

BIG = "C0BIG"
MEMBERS = 200
QUESTIONS = 50


def test_fifty_questions_in_a_200_member_channel_look_each_member_up_once(make_env: EnvFactory) -> None:
    env = make_env(workers=8)
    people = list(env.ids.values())
    extra = [f"UM{i:04d}" for i in range(MEMBERS - len(people))]
    for user in extra:
        env.slack.add_user(user, user.lower(), email=f"{user.lower()}@acme.io")
    members = people + extra
    env.slack.add_channel(BIG, "big", members=members)
    team = env.slack.workspace.team_id
    env.bot.audience.set_policy(team, BIG, "channel", by=people[0])
    askers = [members[i % len(members)] for i in range(QUESTIONS)]

    def ask(user: str) -> str:
        return env.slack.post_as_user(
            user, BIG, f"<@{env.slack.bot_user_id}> why did the 4.2 Android release slip?"
        )

    with ThreadPoolExecutor(max_workers=16) as pool:
        asked = list(pool.map(ask, askers))
    answers = [env.wait_answers(BIG, ts)[0] for ts in asked]

    lookups = Counter(call["user"] for call in env.slack.calls_to("users.info"))
    assert len(answers) == QUESTIONS
    assert not [a for a in answers if NO_IDENTITY in format_message(a)]
    assert set(lookups) == set(members) - {env.slack.bot_user_id}  # every person was looked up ...
    assert max(lookups.values()) == 1  # ... once, across 50 concurrent questions
    walks = [c for c in env.slack.calls_to("conversations.members") if not c.get("cursor")]
    assert len(walks) == 1  # one walk of the member list (two pages: 200 people and the bot)
