"""What a document says reaches Slack as text: a public page planted with every mrkdwn control sequence (channel
and group mentions, a user and a channel, a disguised link in mrkdwn and in markdown) is asked about, and every
Web API call Sleuth makes (the notification text, the blocks, the streamed chunks) carries it escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.local_slack import GENERAL
from connectors.sources.folder.connector import FolderConfig, FolderConnector
from connectors.sync import sync_source
from tests.e2e.conftest import EnvFactory, SlackEnv

CONTROLS = ("<!channel>", "<!here>", "<!everyone>", "<@U0DANA>", "<#C0GENERAL>", "<!subteam^S0ADMINS>",
            "<https://evil.example/login|the IT handbook>")  # fmt: skip
MARKDOWN_LINK = "[the visitor handbook](https://evil.example/md)"
PAGE = f"""---
title: Guest Wi-Fi {CONTROLS[1]}
space: company
updated: 2026-03-01
version: 1
acl: [public]
---
# Guest Wi-Fi

The guest Wi-Fi network is called AcmeVisitors {" ".join(CONTROLS)} and {MARKDOWN_LINK} & more.
"""
QUESTION = "what is the guest Wi-Fi network called?"
OUTGOING = ("chat.postMessage", "chat.update", "chat.postEphemeral", "chat.startStream", "chat.appendStream",
            "chat.stopStream", "assistant.threads.setStatus")  # fmt: skip


def _plant(env: SlackEnv, folder: Path) -> None:
    (folder / "wiki").mkdir(parents=True)
    (folder / "wiki" / "guest-wifi.md").write_text(PAGE, encoding="utf-8")
    connector = FolderConnector(FolderConfig(path=folder), name="planted")
    assert sync_source(env.bot.runtime.store, connector).status == "ok"


def _sent(env: SlackEnv) -> str:
    """Everything Sleuth sent to Slack's message methods, as one string of JSON."""
    return json.dumps(
        [call.params for call in env.slack.calls if call.method in OUTGOING], ensure_ascii=False
    )


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "posted"])
@pytest.mark.parametrize("where", ["dm", "channel"])
def test_control_sequences_in_a_page_reach_slack_escaped(
    make_env: EnvFactory, tmp_path: Path, stream: bool, where: str
) -> None:
    env = make_env(slack_stream_answers=stream)
    _plant(env, tmp_path / "planted")
    alice = env.ids["alice@acme.io"]

    if where == "dm":
        channel = env.slack.open_dm(alice)
        ts = env.slack.post_as_user(alice, channel, QUESTION)
        env.settle()
    else:
        channel, ts = GENERAL, env.mention("alice@acme.io", QUESTION)
    [answer] = env.wait_answers(channel, ts)

    sent = _sent(env)
    assert "AcmeVisitors" in sent and "&lt;!channel&gt;" in sent  # the sentence did reach Slack, escaped
    assert [c for c in (*CONTROLS, "](https://evil") if c in sent] == []
    methods = {call.method for call in env.slack.calls if call.method in OUTGOING}
    assert ("chat.startStream" in methods) is stream  # both paths were taken
    assert "AcmeVisitors" in json.dumps(answer)
