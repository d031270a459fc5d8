"""Thread status lines against the emulator: coalesced, at most one call per channel per interval, a 429 defers
the line (no sleeping, no switch to the placeholder), a refusal falls back to the placeholder for that thread
only, and clearing drops unsent lines."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from slack_sdk import WebClient

from bot.status import MAX_DEFERRALS, StatusBoard
from bot.testing.slack_emulator import SlackEmulator

C = "C1"


@dataclass
class Clock:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Setup:
    slack: SlackEmulator
    board: StatusBoard
    clock: Clock
    thread_ts: str
    placeholder_ts: str


@pytest.fixture
def setup() -> Iterator[Setup]:
    with SlackEmulator() as slack:
        slack.add_user("U1", "ann")
        slack.add_channel(C, "eng", members=["U1"])
        thread_ts = slack.post_as_user("U1", C, "a question")
        client = WebClient(token=slack.bot_token, base_url=slack.api_url)
        placeholder = client.chat_postMessage(channel=C, thread_ts=thread_ts, text="Looking into it…")["ts"]
        clock = Clock()
        board = StatusBoard(client, interval_s=1.0, clock=clock, background=False)
        yield Setup(slack, board, clock, thread_ts, placeholder)


def test_lines_are_coalesced_and_rate_limited_per_channel(setup: Setup) -> None:
    status = setup.board.thread(C, setup.thread_ts, setup.placeholder_ts)
    status.set("Planning…")
    assert setup.board.pump() is None
    status.set("Round 1: reading A…")
    status.set("Round 1: reading B…")
    assert setup.board.pump() == pytest.approx(1.0)  # the channel's next slot; nothing sent yet
    setup.clock.now += 1.0
    setup.board.pump()

    assert setup.slack.statuses(C, setup.thread_ts) == ["Planning…", "Round 1: reading B…"]


def test_a_429_defers_the_line_without_sleeping_or_giving_up_on_the_status(setup: Setup) -> None:
    setup.slack.fail_next("assistant.threads.setStatus", retry_after=5)
    status = setup.board.thread(C, setup.thread_ts, setup.placeholder_ts)
    status.set("Planning…")

    assert setup.board.pump() == pytest.approx(5.0)  # told when to come back, instead of sleeping
    setup.clock.now += 5.0
    setup.board.pump()

    assert setup.slack.statuses(C, setup.thread_ts) == ["Planning…"]
    assert setup.slack.calls_to("chat.update") == []  # no switch to the placeholder


def test_a_refused_status_falls_back_to_the_placeholder_for_that_thread_only(setup: Setup) -> None:
    other_ts = setup.slack.post_as_user("U1", C, "another question")
    setup.slack.fail_next("assistant.threads.setStatus", error="not_allowed_token_type", status=200)
    refused = setup.board.thread(C, setup.thread_ts, setup.placeholder_ts)
    refused.set("Planning…")
    setup.board.pump()
    setup.clock.now += 1.0
    setup.board.thread(C, other_ts, None).set("Planning…")
    setup.board.pump()

    [update] = setup.slack.calls_to("chat.update")
    assert (update["ts"], update["text"]) == (setup.placeholder_ts, "Planning…")
    assert setup.slack.statuses(C, other_ts) == ["Planning…"]


def test_a_line_slack_keeps_deferring_is_dropped_after_a_few_tries(setup: Setup) -> None:
    for _ in range(MAX_DEFERRALS):
        setup.slack.fail_next("assistant.threads.setStatus", retry_after=1)
    setup.board.thread(C, setup.thread_ts, setup.placeholder_ts).set("Planning…")
    for _ in range(MAX_DEFERRALS):
        setup.board.pump()
        setup.clock.now += 1.0

    assert setup.board.pump() is None  # nothing left to send
    assert len(setup.slack.calls_to("assistant.threads.setStatus")) == MAX_DEFERRALS
    assert setup.slack.statuses(C, setup.thread_ts) == []


def test_clear_drops_unsent_lines_and_clears_a_shown_status(setup: Setup) -> None:
    shown = setup.board.thread(C, setup.thread_ts, setup.placeholder_ts)
    shown.set("Planning…")
    setup.board.pump()
    shown.set("Writing the answer…")  # still waiting for the channel's next slot
    shown.clear()
    shown.set("too late")
    setup.clock.now += 1.0
    setup.board.pump()

    assert setup.slack.statuses(C, setup.thread_ts) == ["Planning…", ""]


def test_the_sender_thread_delivers_without_anyone_pumping() -> None:
    with SlackEmulator() as slack:
        slack.add_user("U1", "ann")
        slack.add_channel(C, "eng", members=["U1"])
        ts = slack.post_as_user("U1", C, "a question")
        board = StatusBoard(WebClient(token=slack.bot_token, base_url=slack.api_url))
        status = board.thread(C, ts, None)
        status.set("Planning…")
        slack.wait_for(lambda: slack.statuses(C, ts) == ["Planning…"])
        status.clear()
        slack.wait_for(lambda: slack.statuses(C, ts) == ["Planning…", ""])
        board.close()
