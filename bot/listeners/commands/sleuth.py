"""`/sleuth ask|gaps|forget|sources|link|policy|help`; any other text is taken as a question. Replies are private (ephemeral)
and immediate; a question is queued and answered in a thread of the channel by the job worker.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_bolt import Ack, App

from bot.answering import MAX_QUESTION_CHARS, NO_IDENTITY, TOO_LONG
from bot.askers import UnknownAsker
from bot.deps import BotDeps
from bot.forgetting import forget_person
from bot.identity import LinkFailed, UnknownSource
from bot.insights import recurring_gaps, slack_viewer
from bot.jobs import COMMAND, NewJob
from bot.listeners.commands import replies
from bot.render_insights import gaps_text

log = logging.getLogger(__name__)

COMMAND_NAME = "/sleuth"
TOP_GAPS = 10


def handle_sleuth(ack: Ack, command: dict[str, Any], *, deps: BotDeps) -> None:
    verb, _, rest = (command.get("text") or "").strip().partition(" ")
    verb = verb.lower()
    if verb in ("", "help"):
        ack(text=replies.HELP)
    elif verb == "sources":
        ack(text=_sources(deps))
    elif verb == "gaps":
        ack(text=_gaps(deps, command))
    elif verb == "forget":
        ack(text=_forget(deps, command))
    elif verb == "link":
        ack(**_link(deps, command, rest.strip()))
    elif verb == "policy":
        ack(text=_policy(deps, command, rest.strip().lower()))
    else:
        ack(text=_ask(deps, command, rest if verb == "ask" else command["text"]))


def _ask(deps: BotDeps, command: dict[str, Any], question: str) -> str:
    question = question.strip()
    if not question:
        return replies.HELP
    if len(question) > MAX_QUESTION_CHARS:
        return TOO_LONG
    key = f"cmd:{command['trigger_id']}"
    deps.receipts.submit(  # acknowledged in the background: the echo, or a private "invite me first"
        NewJob(team=command["team_id"], event_id=key, message_key=key, channel=command["channel_id"],
               user=command["user_id"], text=question, kind=COMMAND, response_url=command.get("response_url"))
    )  # fmt: skip
    return replies.ASKING


def _sources(deps: BotDeps) -> str:
    rt = deps.runtime
    status = rt.sync_service.status()
    return replies.sources_text([(e.name, e.kind) for e in rt.sources()], status)


def _gaps(deps: BotDeps, command: dict[str, Any]) -> str:
    """Recurring gaps: an admin's are everyone's, anyone else's only their own; titles as they may see them."""
    if deps.askers is None:
        return replies.HELP
    rt, days = deps.runtime, deps.settings.insights_window_days
    try:
        viewer = slack_viewer(
            rt.store, deps.askers, deps.settings.admin_users, command["team_id"], command["user_id"]
        )
    except UnknownAsker:
        return NO_IDENTITY
    since = datetime.now(UTC) - timedelta(days=days)
    return gaps_text(recurring_gaps(rt.gap_log, viewer, since=since, top=TOP_GAPS), days)


def _forget(deps: BotDeps, command: dict[str, Any]) -> str:
    """`/sleuth forget`: the user's words leave every view (`bot.forgetting`)."""
    if deps.askers is None:
        return replies.HELP
    user = command["user_id"]
    try:
        asker = deps.askers.resolve(command["team_id"], user, notes=False)
    except UnknownAsker:
        return NO_IDENTITY
    rt = deps.runtime
    done = forget_person(
        rt.engine, rt.gap_log, deps.feedback, team=command["team_id"], user=user,
        labels={asker.label, f"slack:{user}"},
    )  # fmt: skip
    log.info("user data forgotten", extra=asdict(done))
    return replies.forgotten_text(done.gap_entries, done.feedback_rows, done.questions)


def _policy(deps: BotDeps, command: dict[str, Any], wanted: str) -> str:
    """`/sleuth policy [asker|channel]`: show or (admins) set who answers in this channel are for."""
    audience = deps.audience
    if audience is None:
        return replies.HELP
    team, channel = command["team_id"], command["channel_id"]
    if not wanted:
        return f"Answer audience here: *{audience.policy(team, channel)}*."
    if command["user_id"] not in deps.settings.admin_users:
        return replies.NOT_ADMIN_POLICY
    if wanted not in ("asker", "channel"):
        return "Use `/sleuth policy asker` or `/sleuth policy channel`."
    audience.set_policy(team, channel, wanted, by=command["user_id"])  # type: ignore[arg-type]
    return f"Answer audience here is now *{wanted}*."


def _link(deps: BotDeps, command: dict[str, Any], source: str) -> dict[str, Any]:
    linker = deps.linker
    if linker is None or not linker.sources:
        return {"text": replies.NOTHING_TO_LINK}
    team, user = command["team_id"], command["user_id"]
    if not source:
        return {"text": replies.links_text(linker.links(team, user), [s.source for s in linker.sources])}
    email = deps.askers.verified_email(user) if deps.askers is not None else None
    try:
        url = linker.start(team, user, source, slack_email=email)
    except UnknownSource:
        return {"text": replies.links_text(linker.links(team, user), [s.source for s in linker.sources])}
    except LinkFailed as exc:
        return {"text": str(exc)}
    label = linker.source(source).label
    return {"text": f"Connect your {label} account", "blocks": replies.link_blocks(label, url)}


def register(app: App, deps: BotDeps) -> None:
    app.command(COMMAND_NAME)(functools.partial(handle_sleuth, deps=deps))
