"""Builds the Bolt app: one WebClient, two small middlewares, the error boundary, and the listeners.

`process_before_response=True`: every listener only enqueues (or answers a command from the database), so it
returns in milliseconds, and Slack's ack is sent *after* the job is durably queued. A delivery that failed
before that answers 500 and Slack retries it; one that succeeded is deduplicated by the job table.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from slack_bolt import App, BoltContext, BoltRequest, BoltResponse
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.deps import BotDeps
from bot.intake import ignore_reason
from bot.listeners import register
from bot.logcontext import log_context
from bot.settings import Settings
from bot.slack_retry import error_code, is_transient, retry_handlers
from bot.vault import ConfigError

log = logging.getLogger(__name__)

ERROR_REPLY = "Sorry, something went wrong on my side. Please try again in a minute."


def make_client(settings: Settings) -> WebClient:
    if settings.slack_bot_token is None:
        raise ConfigError("set SLEUTH_SLACK_BOT_TOKEN to the bot token (xoxb-...) from the app's OAuth page")
    return WebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=settings.slack_api_url,
        timeout=settings.slack_timeout_s,  # type: ignore[arg-type]
        retry_handlers=retry_handlers(),
    )


def _log_context(body: dict[str, Any], next_: Callable[[], BoltResponse]) -> BoltResponse:
    event = body.get("event") or {}
    user = event.get("user") or body.get("user_id") or (body.get("user") or {}).get("id")
    channel = event.get("channel") or body.get("channel_id") or (body.get("channel") or {}).get("id")
    with log_context(team=body.get("team_id"), channel=channel, user=user, event_id=body.get("event_id")):
        return next_()


def _log_retries(request: BoltRequest, next_: Callable[[], BoltResponse]) -> BoltResponse:
    """Slack's retries are not dropped (the first delivery may have failed); the job table dedupes them."""
    retry = (request.headers.get("x-slack-retry-num") or [None])[0]
    if retry:
        log.info("slack retry delivery", extra={"retry_num": retry})
    return next_()


def _drop_unwanted(
    body: dict[str, Any], context: BoltContext, next_: Callable[[], BoltResponse]
) -> BoltResponse:
    """Acks and drops, with one log line, what must not be answered (`bot.intake.ignore_reason`): the door
    (`bot.request_guard`, or the Socket Mode handler) already dropped what it could without knowing our team."""
    team = context.authorize_result.team_id if context.authorize_result else None
    reason = ignore_reason(body, team=team, now=time.time())
    if reason:
        log.info("delivery ignored", extra={"reason": reason})
        return BoltResponse(status=200, body="")
    return next_()


def handle_error(
    error: Exception, body: dict[str, Any], context: BoltContext, response: BoltResponse | None = None
) -> None:
    """The Bolt-side boundary: log it; tell the person who acted where they wait for an answer.

    A command or a message button answers through its `response_url`; an App Home or modal click has none, so
    the person gets a DM. A failed *event* tells nobody: it answers 500, Slack delivers it again, and the job
    table keeps that to one answer (a DM per failed event would also message people who never asked anything).
    A call Slack refused for good (a trigger or channel the request named that Slack does not know) is no fault
    of ours to retry: 400 with `X-Slack-No-Retry`, one warning line, no traceback.
    """
    if isinstance(error, SlackApiError) and not is_transient(error):
        log.warning("slack refused a call made for a request", extra={"error": error_code(error)})
        if response is not None:
            response.status = 400
            response.headers["x-slack-no-retry"] = ["1"]
    else:
        log.error("listener failed", exc_info=error)
    if context.respond is not None and context.respond.response_url:
        context.respond(text=ERROR_REPLY, response_type="ephemeral", replace_original=False)
    elif _is_view_click(body) and context.user_id and context.client is not None:
        try:
            channel = context.client.conversations_open(users=context.user_id)["channel"]["id"]
            context.client.chat_postMessage(channel=channel, text=ERROR_REPLY)
        except SlackApiError as exc:
            log.warning("error reply not sent", extra={"error": exc.response.get("error")})


def _is_view_click(body: dict[str, Any]) -> bool:
    return body.get("type") == "block_actions" and bool(body.get("view"))


def build_app(settings: Settings, deps: BotDeps, *, client: WebClient | None = None) -> App:
    socket_mode = settings.slack_app_token is not None
    if settings.slack_signing_secret is None and not socket_mode:
        raise ConfigError(
            "set SLEUTH_SLACK_SIGNING_SECRET (HTTP mode) or SLEUTH_SLACK_APP_TOKEN (Socket Mode)"
        )
    secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
    app = App(
        client=client or make_client(settings),
        signing_secret=secret,
        process_before_response=True,
        request_verification_enabled=not socket_mode,
    )
    app.use(_log_context)
    app.use(_drop_unwanted)
    app.use(_log_retries)
    app.error(handle_error)
    register(app, deps)
    return app
