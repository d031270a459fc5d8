"""Every admin view of the gap log and of another person's trace, as text, for the permission audit
(`evals/admin_view_audit.py`, which never imports the bot: the CLI passes this in).

Each view is built by the same functions its handler calls (`recurring_gaps` and the renderers of App Home,
`/sleuth gaps`, the digest and `sleuth gaps`; `trace_reader` and `render_trace` for the "Show trace" modal), read
as an admin with one person's permissions, and turned into the text a reader sees (mrkdwn made plain).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from bot.insights import Viewer, recurring_gaps, store_titles, trace_reader
from bot.mrkdwn import plain
from bot.render_insights import digest_message, gap_line, gaps_text, insights_blocks
from bot.render_trace import render_trace
from connectors.knowledge.store import KnowledgeStore
from graph_flows.gaplog import GapLog, day_note

ALL_GAPS = 10_000  # the audit reads every group, not a view's top few
ROOM = 100


@dataclass(frozen=True)
class AdminViews:
    store: KnowledgeStore
    days: int = 7

    def gap_views(self, gaps: GapLog, principals: frozenset[str]) -> dict[str, str]:
        """View name -> what an admin with these permissions reads of the gap log there."""
        viewer = Viewer(user="", admin=True, title_of=store_titles(self.store, principals))
        reports = recurring_gaps(gaps, viewer, since=None, top=ALL_GAPS)
        by_day: dict[str, list[Any]] = {}
        for entry in gaps.entries():
            by_day.setdefault(entry.day, []).append(entry)
        home = insights_blocks([], [], [], reports, days=self.days, room=ROOM)
        digest = digest_message(reports, [], [], days=self.days)
        return {
            "cli-gaps": "\n".join(plain(gap_line(r, self.days)) for r in reports),
            "cli-gaps-json": json.dumps([asdict(r) for r in reports], default=str, ensure_ascii=False),
            "gaps-export": "".join(day_note(day, es, viewer.can_open) for day, es in sorted(by_day.items())),
            "app-home": _shown(home),
            "slash-gaps": plain(gaps_text(reports, self.days)),
            "digest": _shown(digest),
        }

    def trace_view(self, question: str, trace: list[dict[str, Any]], principals: frozenset[str]) -> str:
        """The "Show trace" modal an admin with these permissions opens on someone else's answer."""
        hidden, can_open = trace_reader(self.store, principals, question)
        return _shown(render_trace(question, trace, hidden, can_open=can_open))


def _shown(value: Any) -> str:
    """Every text a Slack surface displays from these blocks or this message, plain."""
    return "\n".join(plain(t) for t in _texts(value))


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "text" and isinstance(item, str):
                yield item
            else:
                yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
