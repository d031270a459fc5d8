"""What `/sleuth help|gaps|sources|link` answer, as mrkdwn text. Pure builders, escaped."""

from __future__ import annotations

from typing import Any

from bot.identity import LinkInfo
from bot.listeners.actions.link_open import LINK_OPEN_ACTION
from bot.mrkdwn import escape, safe_url

HELP = (
    "*Sleuth* answers from your wiki and tickets, citing every claim.\n"
    "• `/sleuth ask <question>` (or just `/sleuth <question>`): I answer in this channel, in a thread\n"
    "• mention me in a channel, reply in my threads, or DM me\n"
    "• `/sleuth sources`: what I read, and when it was last synced\n"
    "• `/sleuth gaps`: questions I could not answer, grouped by what was missing (admins: everyone's)\n"
    "• `/sleuth forget`: I forget your questions (in the gap log, feedback and digests) and your feedback clicks\n"
    "• `/sleuth link [source]`: connect your account on a source, so I search it as you\n"
    "• `/sleuth help`: this message"
)
ASKING = "Looking into it — I'll answer in a thread here."
NOT_ADMIN_POLICY = "Only Sleuth admins can change who answers in this channel are for."
NOTHING_TO_LINK = "There is nothing to link: every source here trusts your Slack identity."


def sources_text(entries: list[tuple[str, str]], status: dict[str, dict[str, Any]]) -> str:
    if not entries:
        return "No sources are configured yet."
    lines = ["*Sources*"]
    for name, kind in entries:
        s = status.get(name, {})
        failed = f", {len(s['failures'])} failed items" if s.get("failures") else ""
        lines.append(
            f"• `{escape(name)}` ({escape(kind)}): {escape(str(s.get('status', 'never synced')))}, "
            f"{s.get('documents', 0)} documents, last sync {escape(str(s.get('last_finished') or '–'))}{failed}"
        )
    return "\n".join(lines)


def forgotten_text(gap_entries: int, feedback_rows: int, questions: int = 0) -> str:
    asked = f", the text of {questions} question{'' if questions == 1 else 's'}" if questions else ""
    return (
        f"Done: I removed {gap_entries} gap-log entr{'y' if gap_entries == 1 else 'ies'}{asked} and "
        f"{feedback_rows} feedback click{'' if feedback_rows == 1 else 's'} of yours."
    )


def links_text(links: list[LinkInfo], sources: list[str]) -> str:
    linked = {link.source: link for link in links}
    lines = ["*Your accounts*"]
    for source in sources:
        link = linked.get(source)
        state = f"linked as {escape(link.account)} ({link.status})" if link else "not linked"
        lines.append(f"• `{escape(source)}`: {state}")
    lines.append("Run `/sleuth link <source>` to connect one.")
    return "\n".join(lines)


def link_blocks(label: str, url: str) -> list[dict[str, Any]]:
    """A private message with the provider's sign-in link (as a button, never shown in a channel)."""
    text = f"Connect your {escape(label)} account so I can search it as you. The link works once, for 10 minutes."
    button = {
        "type": "button",
        "action_id": LINK_OPEN_ACTION,
        "text": {"type": "plain_text", "text": f"Connect {label}"[:75]},
        "url": safe_url(url) or url,
    }
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
        {"type": "actions", "elements": [button]},
    ]
