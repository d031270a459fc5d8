"""render.py and mrkdwn.py: limits, escaping, citations and links never cut apart."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bot.mrkdwn import clip, escape, link, safe_url, split
from bot.render import (
    FEEDBACK_ACTION,
    MAX_BLOCKS,
    MAX_MESSAGE_TEXT,
    MAX_SECTION_TEXT,
    SHOW_TRACE_ACTION,
    UPDATE_NOTE,
    footer_text,
    progress_text,
    render_answer,
    streamed_answer,
)
from bot.render_trace import render_trace
from bot.testing.slack_limits import blocks_text_length, validate_blocks

_ATOM = re.compile(r"<[^<>]*>|\[\d+\]")


def _source(n: int, title: str = "Release 4.2 Plan", url: str = "https://wiki.acme.io/p") -> dict[str, Any]:
    return {"n": n, "evidence_id": f"E{n}", "doc_id": f"acme:d{n}", "title": title, "url": f"{url}/{n}",
            "source": "acme", "kind": "page", "updated_at": f"2026-03-{n % 28 + 1:02d}", "version": str(n),
            "snippet": "..."}  # fmt: skip


def _answer(**overrides: Any) -> dict[str, Any]:
    answer = {
        "answered": True,
        "text": "Android 4.2 slipped because ENG-150 is blocked by late rev C motors [1][2].",
        "sources": [_source(1), _source(2, "ENG-150: Motor health card")],
        "gaps": [
            {"kind": "relation", "what": "who approved the new date", "clues": ["E1"], "clue_numbers": [1]}
        ],
        "conflicts": [],
        "confidence": 0.72,
        "rounds": 2,
    }
    return {**answer, **overrides}


def _texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["text"]["text"] for b in blocks if b["type"] == "section"]


def test_a_normal_answer_is_one_valid_message_with_all_parts() -> None:
    [message] = render_answer(_answer(), trace_id="tr1")

    validate_blocks(message["blocks"])
    texts = "\n".join(_texts(message["blocks"]))
    assert "<https://wiki.acme.io/p/1|[1]>" in texts  # citations link to their source
    assert "[2] <https://wiki.acme.io/p/2|ENG-150: Motor health card> · page · acme · updated" in texts
    assert "*Open gaps*\n• who approved the new date [1]" in texts
    kinds = [b["type"] for b in message["blocks"]]
    assert kinds[-3:] == ["context", "context_actions", "actions"]
    feedback = message["blocks"][-2]["elements"][0]
    assert feedback["action_id"] == FEEDBACK_ACTION and feedback["positive_button"]["value"] == "good:tr1"
    assert message["blocks"][-1]["elements"][0] == {**message["blocks"][-1]["elements"][0], "action_id": SHOW_TRACE_ACTION,
                                                    "value": "tr1"}  # fmt: skip
    assert "Confidence 72% · 2 rounds" in message["blocks"][-3]["elements"][0]["text"]


def test_source_text_is_escaped_and_odd_urls_are_not_linked() -> None:
    sources = [
        _source(1, "R&D <script> | notes", url="file:///tmp/x"),
        _source(2, "A>B", url="https://x.io/a|b c"),
    ]
    [message] = render_answer(_answer(text="Use <!channel> & see [1] [2]", sources=sources), trace_id="t")

    texts = "\n".join(_texts(message["blocks"]))
    assert "Use &lt;!channel&gt; &amp; see [1] <https://x.io/a%7Cb%20c/2|[2]>" in texts
    assert "[1] R&amp;D &lt;script&gt; | notes · page" in texts
    assert "<!channel>" not in texts and "<script>" not in texts


def test_conflicts_are_listed_newest_first() -> None:
    conflict = {"about": "the hotel cap", "sides": [
        {"n": 1, "title": "Policy 2024", "updated_at": "2024-01-10", "version": "3", "value": "$300", "sentence": ""},
        {"n": 2, "title": "Policy", "updated_at": "2026-01-15", "version": "9", "value": "$375", "sentence": ""},
    ]}  # fmt: skip
    [message] = render_answer(_answer(conflicts=[conflict]), trace_id="t")

    text = next(t for t in _texts(message["blocks"]) if "Sources disagree" in t)
    assert text.index("$375") < text.index("$300") and "(current first)" in text


def test_a_huge_answer_is_split_within_limits_without_cutting_citations_or_links() -> None:
    sentence = (
        "The rev C motor order from Kestrel slipped by six weeks [3] and see <https://x.io|the plan> too. "
    )
    sources = [_source(n, "T" * 300) for n in range(1, 61)]
    gaps = [{"kind": "relation", "what": "g" * 600, "clue_numbers": [1, 2]} for _ in range(25)]
    answer = _answer(text=sentence * 400, sources=sources, gaps=gaps)

    messages = render_answer(answer, trace_id="t", note=UPDATE_NOTE)

    assert len(messages) > 1
    for message in messages:
        validate_blocks(message["blocks"])
        assert (
            len(message["blocks"]) <= MAX_BLOCKS and blocks_text_length(message["blocks"]) <= MAX_MESSAGE_TEXT
        )
        for text in _texts(message["blocks"]):
            assert len(text) <= MAX_SECTION_TEXT
            assert text.count("[") == text.count("]") and text.count("<") == text.count(">")
    everything = "\n".join(t for m in messages for t in _texts(m["blocks"]))
    assert everything.count("[3]") >= 400  # the whole answer text is kept
    assert "_40 more sources not shown_" in everything and "_15 more open gaps_" in everything
    assert messages[0]["blocks"][0]["elements"][0]["text"] == UPDATE_NOTE
    assert messages[-1]["blocks"][-1]["elements"][0]["action_id"] == SHOW_TRACE_ACTION


@pytest.mark.parametrize("limit", [7, 20, 45, 100])
def test_split_never_cuts_an_atom(limit: int) -> None:
    text = "See [12] and <https://x.io/a|a long title> then &amp; more [3] words " * 5

    pieces = split(text, limit)

    assert all(len(p) <= max(limit, 30) for p in pieces)  # an atom longer than the limit stays whole
    assert [m.group(0) for p in pieces for m in _ATOM.finditer(p)] == [
        m.group(0) for m in _ATOM.finditer(text)
    ]
    assert " ".join(pieces).split() == text.split()


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a & b", "a &amp; b"), ("<@U1>", "&lt;@U1&gt;"), ("plain", "plain")],
    ids=["amp", "angle", "plain"],
)
def test_escape(text: str, expected: str) -> None:
    assert escape(text) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://a.io/x", "https://a.io/x"),
        ("file:///etc/passwd", None),
        ("javascript:alert(1)", None),
        (None, None),
    ],
    ids=["https", "file", "javascript", "none"],
)
def test_safe_url(url: str | None, expected: str | None) -> None:
    assert safe_url(url) == expected


def test_link_and_clip() -> None:
    assert link("https://a.io", "x|y") == "<https://a.io|x¦y>"
    assert clip("one two three [12]", 16) == "one two three…"


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ({"node": "plan"}, "Planning what to look for…"),
        ({"node": "retrieve", "round": 2, "reading": ["ENG-150: Motors", "Release Plan", "X"]},
         "Round 2: reading ENG-150 and 2 more…"),
        ({"node": "retrieve", "round": 1, "reading": ["Release 4.2 Plan"]}, "Round 1: reading Release 4.2 Plan…"),
        ({"node": "retrieve", "round": 3, "reading": []}, "Round 3: searching…"),
        ({"node": "reflect", "round": 1}, "Round 1: checking what is still missing…"),
        ({"node": "answer"}, "Writing the answer…"),
        ({"node": "other"}, None),
    ],
    ids=["plan", "retrieve-ticket", "retrieve-page", "retrieve-none", "reflect", "answer", "unknown"],
)  # fmt: skip
def test_progress_text(step: dict[str, Any], expected: str | None) -> None:
    assert progress_text(step) == expected


def test_trace_is_escaped_and_bounded() -> None:
    trace = [{"node": "plan", "aspects": ["a<b"], "entities": []}] + [
        {
            "node": "retrieve",
            "round": i,
            "direction": "text",
            "queries": ["q" * 500],
            "read": ["E1"],
            "reading": ["T"],
        }
        for i in range(200)
    ]
    message = render_trace("why <x>?", trace)

    validate_blocks(message["blocks"])
    assert (
        "a&lt;b" in message["blocks"][1]["text"]["text"]
        and "why &lt;x&gt;?" in message["blocks"][0]["text"]["text"]
    )
    assert blocks_text_length(message["blocks"]) <= MAX_MESSAGE_TEXT


STEP = {
    "node": "retrieve",
    "round": 2,
    "reading": ["Motor price list", "Release Plan", "Payroll 2026"],
    "reading_ids": ["acme:finance/prices", "acme:release", "acme:hr/payroll"],
}


@pytest.mark.parametrize(
    ("nameable", "expected"),
    [
        ({"acme:release"}, "Round 2: reading Release Plan and 2 more…"),
        (set(), "Round 2: reading 3 passages…"),
    ],
    ids=["only-what-all-may-open", "none-nameable"],
)
def test_progress_text_in_a_channel_names_only_what_every_member_may_open(
    nameable: set[str], expected: str
) -> None:
    assert progress_text(STEP, nameable=nameable.__contains__) == expected


HOSTILE = "<!channel> <!here> <!everyone> <@U0DANA> <#C0GENERAL> <!subteam^S1> <https://evil.io|docs> [docs](https://evil.io)"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def test_no_control_sequence_from_a_document_leaves_in_any_part() -> None:
    """The notification text, every block, the streamed markdown: the only links are Sleuth's citations."""
    gaps = [{"kind": "relation", "what": HOSTILE, "clue_numbers": [1]}]
    conflicts = [
        {"about": HOSTILE, "sides": [{"n": 1, "title": HOSTILE, "value": HOSTILE, "updated_at": HOSTILE}]}
    ]
    answer = _answer(text=f"{HOSTILE} [1] [2]", sources=[_source(1, HOSTILE), _source(2)], gaps=gaps,
                     conflicts=conflicts)  # fmt: skip

    streamed = streamed_answer(answer, trace_id="t")
    assert streamed is not None
    sent = _strings(render_answer(answer, trace_id="t")) + _strings(streamed)

    links = {m for s in sent for m in re.findall(r"<[^<>]*>", s)}
    assert links <= {"<https://wiki.acme.io/p/1|[1]>", "<https://wiki.acme.io/p/2|[2]>",
                     "<https://wiki.acme.io/p/1|&lt;!channel&gt; &lt;!here&gt; &lt;!everyone&gt; &lt;@U0DANA&gt; "
                     "&lt;#C0GENERAL&gt; &lt;!subteam^S1&gt; &lt;https://evil.io¦docs&gt; [docs](https://evil.io)>",
                     "<https://wiki.acme.io/p/2|Release 4.2 Plan>"}  # fmt: skip
    markdown_links = {m for s in _strings(streamed[0]) for m in re.findall(r"(?<!\\)\]\((\S+?)\)", s)}
    assert markdown_links == {"https://wiki.acme.io/p/1", "https://wiki.acme.io/p/2"}
    assert "\\[docs\\](https://evil.io)" in streamed[0] and "&lt;!channel&gt;" in streamed[0]


@pytest.mark.parametrize(
    ("fallbacks", "line"),
    [
        ([], None),
        ([{"step": "compose", "kind": "slow"}], "answered by the offline reader: the model was too slow"),
        ([{"step": "plan", "kind": "unreadable"}, {"step": "compose", "kind": "unavailable"}],
         "answered by the offline reader: the model was unavailable"),
        ([{"step": "reflect", "kind": "budget"}],
         "the model ran out of time for part of the search; the offline reader stood in"),
    ],
    ids=["model", "compose-slow", "compose-down", "reflect-only"],
)  # fmt: skip
def test_the_footer_says_when_the_offline_reader_stood_in(
    fallbacks: list[dict[str, str]], line: str | None
) -> None:
    footer = footer_text({"confidence": 0.5, "rounds": 1, "fallbacks": fallbacks})
    assert footer.startswith("Confidence 50% · 1 round · only sources you can see were used")
    assert (line in footer) if line else footer.endswith("were used")
