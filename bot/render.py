"""Answer -> Slack messages (Block Kit), the thread status line, and the private trace. Pure: no client, no I/O.

`render_answer` returns one or more messages, each within Slack's limits (50 blocks, 3,000 characters per
section, about 12k characters of block text per message). What must stay (the answer text, open gaps,
confidence, feedback) stays, split over several messages if need be; what may be cut (sources past a budget)
is cut, and the message says how many were left out. All source and model text is escaped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from bot.mrkdwn import clip, escape, escape_markdown, link, markdown_link, safe_url, split

MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_MESSAGE_TEXT = 11_000  # Slack rejects ~12-13k of block text per message (msg_blocks_too_long)
MAX_SOURCES_SHOWN = 20
MAX_GAPS_SHOWN = 10
MAX_ITEM_CHARS = 400  # one source line, gap or conflict side
MAX_FALLBACK_TEXT = 300  # the notification text beside the blocks
MAX_STATUS_CHARS = 90

FEEDBACK_ACTION = "sleuth_feedback"
SHOW_TRACE_ACTION = "sleuth_show_trace"
UPDATE_NOTE = ":pencil2: Updated answer, for the edited question."

_CITATION = re.compile(r"\[(\d+)\]")
_ESCAPED_CITATION = re.compile(r"\\\[(\d+)\\\]")  # a citation after `escape_markdown`
NO_ANSWER = "I have no answer to show."
_TICKET = re.compile(r"^([A-Z][A-Z0-9]+-\d+)\b")

Message = dict[str, Any]  # {"text": fallback, "blocks": [...]}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def _sections(text: str) -> list[dict[str, Any]]:
    return [_section(piece) for piece in split(text, MAX_SECTION_TEXT)]


def answer_text(answer: dict[str, Any]) -> str:
    """The answer with each [n] linked to its source (when it has a web URL); everything escaped."""
    urls = {s["n"]: safe_url(s.get("url")) for s in answer.get("sources", [])}

    def cite(m: re.Match[str]) -> str:
        url = urls.get(int(m.group(1)))
        return f"<{url}|[{m.group(1)}]>" if url else m.group(0)

    return _CITATION.sub(cite, escape(answer.get("text") or NO_ANSWER))


def answer_markdown(answer: dict[str, Any]) -> str:
    """The answer as markdown for a stream: everything escaped, each [n] a link to its source."""
    urls = {s["n"]: s.get("url") for s in answer.get("sources", [])}
    text = escape_markdown(answer.get("text") or NO_ANSWER)
    return _ESCAPED_CITATION.sub(lambda m: markdown_link(urls.get(int(m.group(1))), f"[{m.group(1)}]"), text)


def source_lines(sources: list[dict[str, Any]]) -> list[str]:
    shown = [
        clip(
            f"[{s['n']}] {link(s.get('url'), s.get('title') or s.get('doc_id', '?'))} · {escape(s.get('kind', ''))}"
            f" · {escape(s.get('source', ''))} · updated {escape(str(s.get('updated_at') or '?'))}",
            MAX_ITEM_CHARS,
        )
        for s in sources[:MAX_SOURCES_SHOWN]
    ]
    if len(sources) > MAX_SOURCES_SHOWN:
        shown.append(f"_{len(sources) - MAX_SOURCES_SHOWN} more sources not shown_")
    return shown


def gap_lines(gaps: list[dict[str, Any]]) -> list[str]:
    lines = []
    for gap in gaps[:MAX_GAPS_SHOWN]:
        clues = "".join(f"[{n}]" for n in gap.get("clue_numbers", []))
        lines.append(clip(f"• {escape(gap.get('what', ''))} {clues}".rstrip(), MAX_ITEM_CHARS))
    if len(gaps) > MAX_GAPS_SHOWN:
        lines.append(f"_{len(gaps) - MAX_GAPS_SHOWN} more open gaps_")
    return lines


def conflict_lines(conflict: dict[str, Any]) -> list[str]:
    sides = sorted(conflict.get("sides", []), key=lambda s: str(s.get("updated_at") or ""), reverse=True)
    sides.sort(key=lambda s: bool(s.get("outdated")))  # a replaced document goes last, whatever its date
    head = f":warning: *Sources disagree:* {escape(conflict.get('about', ''))} (current first)"
    return [head] + [
        clip(
            f"• [{s['n']}] {escape(s.get('title', ''))} (updated {escape(str(s.get('updated_at') or '?'))}, "
            f"v{escape(str(s.get('version') or '?'))}{', replaced' if s.get('outdated') else ''}): "
            f"{escape(str(s.get('value', '')))}",
            MAX_ITEM_CHARS,
        )
        for s in sides
    ]


def _list_blocks(title: str, lines: list[str]) -> list[dict[str, Any]]:
    return _sections("\n".join([title, *lines])) if lines else []


_FAILED = {
    "slow": "was too slow",
    "budget": "ran out of time",
    "unreadable": "gave replies Sleuth could not use",
    "unavailable": "was unavailable",
}


def footer_text(answer: dict[str, Any]) -> str:
    rounds = answer.get("rounds", 0)
    return (
        f"Confidence {float(answer.get('confidence') or 0):.0%} · {rounds} round{'s' if rounds != 1 else ''}"
        " · only sources you can see were used" + fallback_note(answer)
    )


def fallback_note(answer: dict[str, Any]) -> str:
    """Where the model failed and the offline reasoner stood in: the answer says so, in the asker's words."""
    fallbacks = answer.get("fallbacks") or []
    if not fallbacks:
        return ""
    why = _FAILED.get(fallbacks[-1].get("kind", ""), "was unavailable")
    if any(f.get("step") == "compose" for f in fallbacks):
        return f" · answered by the offline reader: the model {why}"
    return f" · the model {why} for part of the search; the offline reader stood in"


def _actions(trace_id: str) -> list[dict[str, Any]]:
    feedback = {
        "type": "feedback_buttons",
        "action_id": FEEDBACK_ACTION,
        "positive_button": {
            "text": {"type": "plain_text", "text": "Helpful"},
            "accessibility_label": "This answer was helpful",
            "value": f"good:{trace_id}",
        },
        "negative_button": {
            "text": {"type": "plain_text", "text": "Not helpful"},
            "accessibility_label": "This answer was not helpful",
            "value": f"bad:{trace_id}",
        },
    }
    trace = {
        "type": "button",
        "action_id": SHOW_TRACE_ACTION,
        "text": {"type": "plain_text", "text": "Show trace"},
        "value": trace_id,
    }
    return [{"type": "context_actions", "elements": [feedback]}, {"type": "actions", "elements": [trace]}]


def block_text_length(block: dict[str, Any]) -> int:
    """Characters a block adds to a message's text budget."""
    if block.get("type") == "section":
        return len(block["text"]["text"])
    if block.get("type") == "context":
        return sum(len(e.get("text", "")) for e in block["elements"])
    return 0


def render_answer(answer: dict[str, Any], *, trace_id: str, note: str | None = None) -> list[Message]:
    """The answer as messages: the first replaces the placeholder, any others follow it in the thread.

    `note` (mrkdwn, already escaped) heads the first message, e.g. `UPDATE_NOTE` or who asked.
    """
    head = [_context(clip(note, MAX_SECTION_TEXT))] if note else []
    body = _sections(answer_text(answer))
    for conflict in answer.get("conflicts", []):
        title, *sides = conflict_lines(conflict)
        body += _list_blocks(title, sides)
    body += _list_blocks("*Sources*", source_lines(answer.get("sources", [])))
    unconfirmed = unconfirmed_note(answer)
    body += [_context(f"_{unconfirmed}_")] if unconfirmed else []
    body += _list_blocks("*Open gaps*", gap_lines(answer.get("gaps", [])))
    tail = [_context(footer_text(answer)), *_actions(trace_id)]
    fallback = clip(escape(answer.get("text") or "Sleuth's answer"), MAX_FALLBACK_TEXT)
    return pack(head + body, tail, fallback)


def unconfirmed_note(answer: dict[str, Any]) -> str | None:
    """Sources the live access check could not confirm for the asker (`graph_flows.access`): left out, and
    said so, rather than trusted."""
    n = int(answer.get("unconfirmed") or 0)
    if n <= 0:
        return None
    return f"Couldn't confirm access to {n} source{'' if n == 1 else 's'}: not shown."


def streamed_answer(
    answer: dict[str, Any], *, trace_id: str
) -> tuple[str, list[dict[str, Any]], Message] | None:
    """The answer for `bot.streaming`: its text as markdown (streamed), the blocks that follow it (the
    message's blocks but the text's), and the whole answer as one message; None when it needs several."""
    messages = render_answer(answer, trace_id=trace_id)
    if len(messages) > 1:
        return None
    text_blocks = _sections(answer_text(answer))
    rest = [b for b in messages[0]["blocks"] if b not in text_blocks]
    return answer_markdown(answer), rest, messages[0]


def pack(blocks: list[dict[str, Any]], tail: list[dict[str, Any]], fallback: str) -> list[Message]:
    """Blocks in order into messages within the limits; `tail` (footer, buttons) ends the last message."""
    messages: list[list[dict[str, Any]]] = [[]]
    size = 0
    for block in blocks:
        length = block_text_length(block)
        if messages[-1] and (len(messages[-1]) >= MAX_BLOCKS or size + length > MAX_MESSAGE_TEXT):
            messages.append([])
            size = 0
        messages[-1].append(block)
        size += length
    tail_size = sum(block_text_length(b) for b in tail)
    if len(messages[-1]) + len(tail) > MAX_BLOCKS or size + tail_size > MAX_MESSAGE_TEXT:
        messages.append([])
    messages[-1].extend(tail)
    total = len(messages)
    return [
        {"text": fallback if n == 0 else f"(continued {n + 1}/{total})", "blocks": m}
        for n, m in enumerate(messages)
    ]


def notice(text: str) -> Message:
    """A short message from Sleuth (a hint, an apology) in the same shape as an answer."""
    return {"text": text, "blocks": [_section(text)]}


def short_title(title: str) -> str:
    """ "ENG-150: Rev C motors late" -> "ENG-150"; other titles are clipped for a status line."""
    m = _TICKET.match(title)
    return m.group(1) if m else clip(title, 40)


def progress_text(step: dict[str, Any], *, nameable: Callable[[str], bool] | None = None) -> str | None:
    """The thread status for a finished flow step, e.g. "Round 2: reading ENG-150 and 2 more…".

    `nameable(doc_id)` says which documents the line may name (in a channel: those every member may open);
    None names any. With nothing nameable the line only counts: "Round 2: reading 3 passages…"."""
    node, round_no = step.get("node"), step.get("round")
    if node == "plan":
        return "Planning what to look for…"
    if node == "retrieve":
        reading = [str(t) for t in step.get("reading") or []]
        if not reading:
            return f"Round {round_no}: searching…"
        if nameable is not None:
            ids = [str(d) for d in step.get("reading_ids") or []]
            named = [t for t, d in zip(reading, ids, strict=False) if nameable(d)]
            if not named:
                return f"Round {round_no}: reading {len(reading)} passage{'s' if len(reading) > 1 else ''}…"
            reading = named + [t for t in reading if t not in named]
        titles = [short_title(t) for t in reading]
        more = f" and {len(titles) - 1} more" if len(titles) > 1 else ""
        return clip(f"Round {round_no}: reading {titles[0]}{more}…", MAX_STATUS_CHARS)
    if node == "reflect":
        return f"Round {round_no}: checking what is still missing…"
    if node == "answer":
        return "Writing the answer…"
    return None
