"""The investigation's rounds as a private (ephemeral) message for the asker (or, in a modal, an admin). Pure,
like `render.py`. Another reader than the asker passes `hidden` (names and queries they may not see are
counted) and `can_open`: the plan's aspects, worded from documents in a follow-up, go through
`graph_flows.derived.shown` like every other derived text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.mrkdwn import clip, escape, split
from bot.render import MAX_BLOCKS, MAX_ITEM_CHARS, MAX_MESSAGE_TEXT, MAX_SECTION_TEXT, Message
from graph_flows.derived import CanOpen, Derived, docs_of, shown

NOT_YOURS = "Only the person who asked can see how this answer was found."
GONE = "I no longer have the trace for this answer."


Hidden = Callable[[str], bool]  # a name or query the reader may not see (an admin reading another's trace)


def _never(_: str) -> bool:
    return False


def _anything(_: str) -> bool:
    return True


def _names(items: Any, hidden: Hidden = _never) -> str:
    if not isinstance(items, list | tuple):
        return escape(str(items)) if items is not None else "–"
    shown = [escape(str(i)) for i in items if not hidden(str(i))]
    held = len(items) - len(shown)
    if held:
        shown.append(f"{held} you cannot open")
    return ", ".join(shown) or "–"


def _aspects(step: dict[str, Any], can_open: CanOpen, question: str) -> list[str]:
    """The plan's aspects as this reader may read them: worded from documents they cannot open, as typed."""
    docs = docs_of(step.get("derived_from") or [])
    aspects = step.get("aspects") if isinstance(step.get("aspects"), list) else [step.get("aspects")]
    return list(dict.fromkeys(shown(Derived(str(a), docs, question), can_open) for a in aspects or []))


def trace_line(
    step: dict[str, Any], hidden: Hidden = _never, *, can_open: CanOpen = _anything, question: str = ""
) -> str:
    """One step; names, titles and queries for which `hidden` holds are counted, never shown; wording derived
    from a document the reader may not open (`can_open`) reads as the typed `question`."""
    node, round_no = step.get("node"), step.get("round")
    if node == "plan":
        route = f" · route: {escape(str(step['route']))}" if "route" in step else ""
        aspects = _names(_aspects(step, can_open, question))
        return f"*Plan* · aspects: {aspects} · entities: {_names(step.get('entities'), hidden)}{route}"
    if node == "retrieve":
        return (
            f"*Round {round_no} · retrieve* ({escape(str(step.get('direction', '')))}) · "
            f"queries: {_names(step.get('queries'), hidden)} · read {len(step.get('read') or [])}: "
            f"{_names(step.get('reading'), hidden)}"
        )
    if node == "reflect":
        return (
            f"*Round {round_no} · reflect* · established {len(step.get('established') or [])}, "
            f"missing {len(step.get('missing') or [])} · next: {escape(str(step.get('next') or '–'))} · "
            f"stop: {escape(str(step.get('stop') or 'no'))}"
        )
    if node == "answer":
        return (
            f"*Answer* · cited {_names(step.get('cited'))} · conflicts {step.get('conflicts') or 0} · "
            f"confidence {escape(str(step.get('confidence')))}{_model_usage(step.get('llm'))}"
        )
    return escape(str(node))


def _model_usage(usage: Any) -> str:
    """The model's share of the answer: calls, tokens, and how many steps fell back to the offline reasoner."""
    if not isinstance(usage, dict):
        return ""
    fallbacks = usage.get("fallbacks") or []
    line = (
        f"\n*Model* · {usage.get('calls', 0)} call(s), {usage.get('tokens', 0)} tokens · "
        f"{len(fallbacks)} of {usage.get('steps', 0)} step(s) fell back to the offline reasoner "
        f"(fallback rate {float(usage.get('fallback_rate') or 0.0):.0%})"
    )
    return line + "".join(f"\n  ↳ {escape(clip(str(f), 200))}" for f in fallbacks[:3])


def render_trace(
    question: str, trace: list[dict[str, Any]], hidden: Hidden = _never, *, can_open: CanOpen = _anything
) -> Message:
    """One message: a header and one line per step, within the block and text limits (later steps cut)."""
    lines = [
        clip(trace_line(step, hidden, can_open=can_open, question=question), MAX_ITEM_CHARS) for step in trace
    ]
    blocks: list[dict[str, Any]] = [
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": f"*How I answered* “{escape(clip(question, 200))}”"},
        }
    ]
    size = 0
    for piece in split("\n".join(lines) or "No steps were recorded.", MAX_SECTION_TEXT):
        if len(blocks) >= MAX_BLOCKS - 1 or size + len(piece) > MAX_MESSAGE_TEXT:
            blocks.append(
                {"type": "context", "elements": [{"type": "mrkdwn", "text": "_Later steps not shown._"}]}
            )
            break
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": piece}})
        size += len(piece)
    return {"text": "How I answered", "blocks": blocks}
