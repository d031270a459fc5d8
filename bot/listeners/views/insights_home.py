"""The feedback-and-gaps section of App Home: admins see every not-helpful answer (with "Show trace"), the
helpful rate per week and per source, and the recurring gaps; anyone else sees only their own. All of it read
with the viewer's own permissions (`bot.insights`)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.askers import UnknownAsker
from bot.deps import BotDeps
from bot.insights import feedback_items, helpful_rates, recurring_gaps, slack_viewer
from bot.render_insights import insights_blocks

log = logging.getLogger(__name__)

ADMIN_TITLE = "*Feedback and gaps (admin)*"
OWN_TITLE = "*Your feedback and gaps*"
TOP_GAPS = 5


def insights_section(deps: BotDeps, team: str, user: str, *, room: int) -> list[dict[str, Any]]:
    if deps.askers is None:
        return []
    rt = deps.runtime
    try:
        viewer = slack_viewer(rt.store, deps.askers, deps.settings.admin_users, team, user)
    except UnknownAsker:
        log.warning("app home without insights: user unknown to slack just now")
        return []
    days = deps.settings.insights_window_days
    since = datetime.now(UTC) - timedelta(days=days)
    items = feedback_items(deps.feedback, deps.jobs, viewer, since=since.timestamp())
    weeks, sources = helpful_rates(deps.feedback, deps.jobs, viewer, since=since.timestamp())
    gaps = recurring_gaps(rt.gap_log, viewer, since=since, top=TOP_GAPS)
    title = {
        "type": "section",
        "text": {"type": "mrkdwn", "text": ADMIN_TITLE if viewer.admin else OWN_TITLE},
    }
    return [title, *insights_blocks(items, weeks, sources, gaps, days=days, room=room - 1)]
