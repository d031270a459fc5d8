"""Feedback, recurring gaps and round-cap questions as mrkdwn lines and Block Kit (App Home, the digest DM,
`/sleuth gaps`). Pure, like `render.py`: what the viewer may not read never reaches here (`bot.insights`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.insights import CappedQuestion, Cited, FeedbackItem, GapReport, Rate
from bot.mrkdwn import clip, escape
from bot.render import MAX_BLOCKS, Message

ADMIN_TRACE_ACTION = "sleuth_admin_trace"  # "Show trace" in App Home and the digest: opens a modal
MAX_QUESTION_CHARS = 200
NO_FEEDBACK = "No answers marked not helpful."
NO_GAPS = "No open gaps logged."


def window_text(days: int) -> str:
    if days % 7 == 0:
        weeks = days // 7
        return "a week" if weeks == 1 else f"{weeks} weeks"
    return "a day" if days == 1 else f"{days} days"


def cited_text(c: Cited) -> str:
    """ "Office Guide (acme) and 1 source you cannot open": never the title of what the viewer cannot open."""
    parts = [f"{escape(title)} ({escape(source)})" for title, source in c.shown]
    if c.hidden:
        parts.append(f"{c.hidden} source{'s' if c.hidden > 1 else ''} you cannot open")
    if not parts:
        return "no sources"
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def gap_line(g: GapReport, days: int) -> str:
    """ "12 questions in 2 weeks asked about “…”; the closest passages were in X (acme); nothing answers them"."""
    questions = "1 question" if g.count == 1 else f"{g.count} questions"
    closest = (
        f"the closest passages were in {cited_text(g.closest)}"
        if g.closest.shown or g.closest.hidden
        else "no passage came close"
    )
    who = f" (from {len(g.askers)} {'person' if len(g.askers) == 1 else 'people'})" if g.askers else ""
    what = escape(clip(g.label, MAX_QUESTION_CHARS))
    return f"{questions} in {window_text(days)}{who} asked about “{what}”; {closest}; nothing answers them"


def feedback_line(item: FeedbackItem) -> str:
    question = f"“{escape(clip(item.question, MAX_QUESTION_CHARS))}”" if item.question else "_an answer_"
    asker = f" asked by <@{item.asker}>" if item.asker else ""
    edited = " · question edited since" if item.edited else ""
    return f"{question}{asker} · {_when(item.at)} · cited {cited_text(item.cited)}{edited}"


def rates_text(weeks: list[Rate], sources: list[Rate]) -> str:
    lines = ["*Helpful rate per week*"]
    lines += [f"• {r.key}: {r.rate:.0%} of {r.helpful + r.not_helpful}" for r in weeks] or [
        "• no feedback yet"
    ]
    if sources:
        lines.append("*Helpful rate per source cited*")
        lines += [f"• `{escape(r.key)}`: {r.rate:.0%} of {r.helpful + r.not_helpful}" for r in sources]
    return "\n".join(lines)


def gaps_text(gaps: list[GapReport], days: int) -> str:
    if not gaps:
        return NO_GAPS
    return "\n".join(["*Recurring gaps, most asked first*", *(f"• {gap_line(g, days)}" for g in gaps)])


def insights_blocks(
    items: list[FeedbackItem],
    weeks: list[Rate],
    sources: list[Rate],
    gaps: list[GapReport],
    *,
    days: int,
    room: int,
) -> list[dict[str, Any]]:
    """The App Home section: not-helpful answers (each with "Show trace"), rates, recurring gaps."""
    title = "*Not helpful, newest first*" if items else NO_FEEDBACK
    blocks = [{"type": "divider"}, _section(title)]
    tail = [_section(rates_text(weeks, sources)), _section(gaps_text(gaps, days))]
    budget = max(room - len(blocks) - len(tail) - 1, 0)
    blocks += [_with_trace(feedback_line(i), i.trace_id) for i in items[:budget]]
    if len(items) > budget:
        blocks.append(_context(f"_{len(items) - budget} more not shown: `sleuth feedback` lists all_"))
    return blocks + tail


def digest_message(
    gaps: list[GapReport], items: list[FeedbackItem], capped: list[CappedQuestion], *, days: int
) -> Message:
    """The weekly admin DM: top recurring gaps, not-helpful answers and round-cap questions, each with a trace."""
    blocks: list[dict[str, Any]] = [_section(f"*Sleuth this past {window_text(days)}*")]
    blocks.append(_section("*Recurring gaps, most asked first*" if gaps else NO_GAPS))
    blocks += [
        _with_trace(gap_line(g, days), g.trace_id) if g.trace_id else _section(gap_line(g, days))
        for g in gaps
    ]
    blocks.append(_section("*Answers marked not helpful*" if items else NO_FEEDBACK))
    room = (MAX_BLOCKS - 4 - len(blocks)) // 2
    blocks += [_with_trace(feedback_line(i), i.trace_id) for i in items[:room]]
    if capped:
        blocks.append(_section("*Questions that ran out of rounds*"))
        for q in capped[: MAX_BLOCKS - len(blocks) - 1]:
            text = f"“{escape(clip(q.question, MAX_QUESTION_CHARS))}”" if q.question else "_a question_"
            blocks.append(_with_trace(f"{text} · cited {cited_text(q.cited)}", q.trace_id))
    fallback = f"Sleuth weekly digest: {len(gaps)} recurring gaps, {len(items)} answers marked not helpful"
    return {"text": fallback, "blocks": blocks[:MAX_BLOCKS]}


def _when(at: datetime) -> str:
    return f"<!date^{int(at.timestamp())}^{{date_short}} {{time}}|{at:%Y-%m-%d %H:%M} UTC>"


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, 3000)}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def _with_trace(text: str, trace_id: str) -> dict[str, Any]:
    button = {
        "type": "button",
        "action_id": ADMIN_TRACE_ACTION,
        "text": {"type": "plain_text", "text": "Show trace"},
        "value": trace_id,
    }
    return {**_section(text), "accessory": button}
