"""Builders for Sleuth's App Home and suggested prompts. Pure."""

from __future__ import annotations

from typing import Any

from bot.mrkdwn import escape

SUGGESTED_TITLE = "Ask me about your wiki and tickets"
SUGGESTED_PROMPTS = [
    {"title": "Why did a release slip?", "message": "Why did the Android 4.2 release slip?"},
    {"title": "Who owns a ticket?", "message": "Who is working on ENG-150, and what is it blocked on?"},
    {"title": "What's the policy?", "message": "Above what trip cost do I need pre-approval?"},
]


def home_view(sources: list[str], *, linking: bool) -> dict[str, Any]:
    names = ", ".join(f"`{escape(name)}`" for name in sources) or "none yet"
    link_hint = "Run `/sleuth link` to connect your accounts on sources that need it." if linking else ""
    text = (
        "*Sleuth* investigates your question across the wiki and tickets, cites every claim and lists what it "
        "could not find.\nMention me in a channel, reply in my threads, DM me, or use `/sleuth ask`.\n"
        f"*Sources:* {names}\n{link_hint}"
    )
    return {"type": "home", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text.strip()}}]}
