""" "Show trace" next to an item in App Home or the weekly digest: the rounds behind that answer, in a modal.

Admins may open any answer's trace, read with their own permissions (names and titles of documents they cannot
open are counted, not shown); anyone else only the trace of their own question. Unknown and not yours alike.
"""

from __future__ import annotations

import functools
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.deps import BotDeps
from bot.insights import trace_reader
from bot.render_insights import ADMIN_TRACE_ACTION
from bot.render_trace import NOT_YOURS, render_trace


def handle_admin_trace(ack: Ack, body: dict[str, Any], client: WebClient, *, deps: BotDeps) -> None:
    ack()
    user = body["user"]["id"]
    job = deps.jobs.by_trace(str(body["actions"][0].get("value") or ""))
    admin = user in deps.settings.admin_users
    if job is None or job.result is None or not (admin or job.user == user) or deps.askers is None:
        client.views_open(trigger_id=body["trigger_id"], view=_modal([_text(NOT_YOURS)]))
        return
    question, trace = job.result.get("question", ""), job.result.get("trace") or []
    if job.user == user:
        message = render_trace(question, trace)
    else:
        principals = deps.askers.resolve(job.team, user, notes=False).principals
        hidden, can_open = trace_reader(deps.runtime.store, principals, question)
        message = render_trace(question, trace, hidden, can_open=can_open)
    client.views_open(trigger_id=body["trigger_id"], view=_modal(message["blocks"]))


def _modal(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "modal",
        "title": {"type": "plain_text", "text": "How Sleuth answered"},
        "blocks": blocks[:100],
    }


def _text(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def register(app: App, deps: BotDeps) -> None:
    app.action(ADMIN_TRACE_ACTION)(functools.partial(handle_admin_trace, deps=deps))
