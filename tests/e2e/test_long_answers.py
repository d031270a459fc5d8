"""Long answers through the real app into the emulator, which rejects what Slack rejects (50 blocks, 3,000
characters per section, ~13k of block text per message): very long text, many sources, many gaps, conflicts.

The investigation is a stand-in that returns a long answer of the flow's shape (the flow's own answers are
short on the demo corpus); rendering, splitting, posting and the emulator's limits are the real ones.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.jobs import DONE
from bot.local_slack import GENERAL
from bot.render import MAX_GAPS_SHOWN, MAX_SOURCES_SHOWN
from bot.testing.slack_limits import MAX_BLOCKS, MAX_SECTION_TEXT_CHARS, blocks_text_length, validate_blocks
from bot.testing.slack_render import format_message
from tests.e2e.conftest import EnvFactory, SlackEnv

QUESTION = "tell me everything about the 4.2 release"

# The answer rendered as Block Kit and posted (not streamed), the form these limits apply to.
POSTED = {"slack_stream_answers": False}


def _long_answer(paragraphs: int, sources: int, gaps: int, conflicts: int) -> dict[str, Any]:
    text = "\n\n".join(
        f"Paragraph {p}: the release moved because the supplier's Rev C motors were late "
        f"and QA found regressions in build {p} [{p % max(sources, 1) + 1}]. "
        + "Details & <more> detail. "
        * 40
        for p in range(paragraphs)
    )
    return {
        "text": text,
        "sources": [
            {"n": n, "doc_id": f"acme:doc-{n}", "title": f"ENG-{n}: a rather long ticket title about motors " * 3,
             "url": f"https://jira.acme.example/browse/ENG-{n}?focusedCommentId={'9' * 40}", "kind": "ticket",
             "source": "jira", "updated_at": f"2026-11-0{n % 9 + 1}"}
            for n in range(1, sources + 1)
        ],
        "gaps": [{"what": f"Gap {g}: who approved the slip of milestone {g}? " + "Unclear. " * 30,
                  "clue_numbers": [1, 2, 3]} for g in range(gaps)],
        "conflicts": [
            {"about": f"the ship date, take {c}", "sides": [
                {"n": 1, "title": "Release plan", "updated_at": "2026-10-01", "version": 3, "value": "Nov 4 " * 50},
                {"n": 2, "title": "ENG-150", "updated_at": "2026-10-09", "version": 7, "value": "Nov 18 " * 50}]}
            for c in range(conflicts)
        ],
        "confidence": 0.42,
        "rounds": 3,
    }  # fmt: skip


class LongAnswers:
    """Answers every question with the same long answer (the `Asks` protocol of the real Investigator)."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer

    def ask(self, thread: str, question: str, *, asker: str, principals: frozenset[str], **kw: Any) -> Any:
        return {"answer": self.answer, "trace": [{"node": "answer"}]}


def _answer_with(env: SlackEnv, answer: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(env.bot.answerer, "_investigator", LongAnswers(answer))
    monkeypatch.setattr(env.bot.answerer, "_audience", None)  # the made-up sources are in no store


def _ask(env: SlackEnv, answer: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    _answer_with(env, answer, monkeypatch)
    ts = env.mention("alice@acme.io", QUESTION)
    assert env.bot.jobs.wait_idle(60) and env.bot.jobs.counts() == {DONE: 1}
    return [m for m in env.slack.bot_messages(GENERAL, ts) if m["ts"] != ts]


@pytest.mark.parametrize(
    ("paragraphs", "sources", "gaps", "conflicts"),
    [(2, 60, 0, 0), (1, 3, 40, 0), (30, 60, 40, 3), (70, 8, 12, 1)],
    ids=["many-sources", "many-gaps", "everything-long", "very-long-text"],
)
def test_a_long_answer_is_posted_whole_within_block_kit_limits(
    make_env: EnvFactory,
    monkeypatch: pytest.MonkeyPatch,
    paragraphs: int,
    sources: int,
    gaps: int,
    conflicts: int,
) -> None:
    env = make_env(**POSTED)
    answer = _long_answer(paragraphs, sources, gaps, conflicts)

    messages = _ask(env, answer, monkeypatch)

    for message in messages:  # what Slack accepted, checked again against its limits
        blocks = message["blocks"]
        assert validate_blocks(blocks) == blocks and len(blocks) <= MAX_BLOCKS
        assert all(len(b.get("text", {}).get("text", "")) <= MAX_SECTION_TEXT_CHARS for b in blocks)
        assert blocks_text_length(blocks) <= 13_000
    text = "\n".join(format_message(m) for m in messages)
    for p in range(paragraphs):
        assert f"Paragraph {p}:" in text  # nothing of the answer itself is cut
    assert "Details &amp; &lt;more&gt; detail." in str(messages[0]["blocks"])  # escaped
    shown_gaps = min(gaps, MAX_GAPS_SHOWN)
    assert sum(f"Gap {g}:" in text for g in range(gaps)) == shown_gaps
    if gaps > MAX_GAPS_SHOWN:
        assert f"{gaps - MAX_GAPS_SHOWN} more open gaps" in text
    if sources > MAX_SOURCES_SHOWN:
        assert f"{sources - MAX_SOURCES_SHOWN} more sources not shown" in text
    assert text.count("Sources disagree") == conflicts
    feedback = [m for m in messages if any(b["type"] == "context_actions" for b in m["blocks"])]
    assert feedback == [messages[-1]] and "Confidence 42%" in format_message(messages[-1])
    if len(messages) > 1:
        assert messages[1]["text"].startswith("(continued 2/")


def test_a_long_answer_survives_a_failed_part_without_duplicates(
    make_env: EnvFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = make_env(**POSTED, slack_timeout_s=1.0)
    answer = _long_answer(30, 60, 40, 3)
    env.slack.fail_next("chat.postMessage", "internal_error", status=500, times=1)  # the intake placeholder
    _answer_with(env, answer, monkeypatch)
    ts = env.mention("alice@acme.io", QUESTION)
    env.slack.fail_next("chat.postMessage", "fatal_error", status=200)  # the worker's placeholder
    env.slack.slow_next("chat.postMessage", 2.5)  # ... then a part lands but its response is lost
    assert env.bot.jobs.wait_idle(60) and env.bot.jobs.counts() == {DONE: 1}

    messages = [m for m in env.slack.bot_messages(GENERAL, ts) if m["ts"] != ts]
    texts = [m["text"] for m in messages]
    assert len(texts) == len(set(texts)) >= 2  # every part once
    assert texts[-1].startswith(f"(continued {len(texts)}/{len(texts)})")
