"""A click on the answer's feedback buttons: recorded with the answer's thread id and trace id."""

from __future__ import annotations

import functools
from typing import Any

from slack_bolt import Ack, App, Respond

from bot.deps import BotDeps
from bot.feedback import Feedback
from bot.render import FEEDBACK_ACTION

VERDICTS = ("good", "bad")
THANKS = "Thanks — noted. It helps me get better."


def handle_feedback(ack: Ack, body: dict[str, Any], respond: Respond, *, deps: BotDeps) -> None:
    ack()
    verdict, _, trace_id = str(body["actions"][0].get("value") or "").partition(":")
    job = deps.jobs.by_trace(trace_id)
    if verdict not in VERDICTS or job is None:
        return
    container = body.get("container") or {}
    deps.feedback.record(
        Feedback(team=job.team, channel=job.channel, message_ts=str(container.get("message_ts") or ""),
                 thread_id=job.thread_id, trace_id=trace_id, user=body["user"]["id"], value=verdict)
    )  # fmt: skip
    respond(text=THANKS, response_type="ephemeral", replace_original=False)


def register(app: App, deps: BotDeps) -> None:
    app.action(FEEDBACK_ACTION)(functools.partial(handle_feedback, deps=deps))
