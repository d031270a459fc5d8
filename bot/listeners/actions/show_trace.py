""" "Show trace": the rounds behind an answer, privately, to the person who asked (and no one else)."""

from __future__ import annotations

import functools
from typing import Any

from slack_bolt import Ack, App, Respond

from bot.deps import BotDeps
from bot.render import SHOW_TRACE_ACTION
from bot.render_trace import NOT_YOURS, render_trace


def handle_show_trace(ack: Ack, body: dict[str, Any], respond: Respond, *, deps: BotDeps) -> None:
    ack()
    job = deps.jobs.by_trace(str(body["actions"][0].get("value") or ""))
    if job is None or job.result is None or job.user != body["user"]["id"]:
        respond(
            text=NOT_YOURS, response_type="ephemeral", replace_original=False
        )  # unknown and not yours alike
        return
    message = render_trace(job.result.get("question", ""), job.result.get("trace") or [])
    respond(**message, response_type="ephemeral", replace_original=False)


def register(app: App, deps: BotDeps) -> None:
    app.action(SHOW_TRACE_ACTION)(functools.partial(handle_show_trace, deps=deps))
