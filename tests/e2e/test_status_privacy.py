"""The progress status in a channel is seen by everyone there: under the default `asker` audience it names only
documents every member may open, whether Slack shows it as the thread status or as the placeholder's text."""

from __future__ import annotations

import pytest

from bot.local_slack import GENERAL
from bot.render import short_title
from tests.e2e.conftest import EnvFactory, SlackEnv

FINANCE = "What do the Supplier Contract Terms say about late delivery credits from Kestrel?"


def _restricted_titles_read(env: SlackEnv, ts: str) -> set[str]:
    """Titles of the non-public documents the asker's investigation read (what must not be named)."""
    rt = env.bot.runtime
    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)
    assert job.result is not None
    read = {e["doc_id"] for e in job.result["answer"].get("sources") or []}
    for step in job.result.get("trace") or []:
        read |= set(step.get("reading_ids") or [])
    public = frozenset({"public"})
    titles = set()
    for doc_id in read:
        if rt.store.document(doc_id, public) is None:
            info = rt.store.document(doc_id, rt.principals_for_email("bob@acme.io"))
            assert info is not None
            titles.add(info.title)
    return titles


@pytest.mark.parametrize("refused", [False, True], ids=["thread-status", "placeholder-fallback"])
def test_status_in_a_channel_names_no_restricted_document(make_env: EnvFactory, refused: bool) -> None:
    env = make_env(slack_status_interval_s=0.0)
    if refused:  # Slack refuses the status for this app: the same lines go into the public placeholder
        env.slack.fail_next(
            "assistant.threads.setStatus", error="not_allowed_token_type", status=200, times=50
        )
    ts = env.mention("bob@acme.io", FINANCE)
    env.wait_answers(GENERAL, ts)

    titles = _restricted_titles_read(env, ts)
    shown = env.slack.statuses(GENERAL, ts) + [c.get("text") or "" for c in env.slack.calls_to("chat.update")]
    assert titles, "the question should read restricted documents"
    assert any(": reading" in line for line in shown)  # some reading line got through (others may coalesce)
    names = titles | {short_title(t) for t in titles}
    leaked = [line for line in shown for name in names if name in line]
    assert leaked == []
