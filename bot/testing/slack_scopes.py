"""Which OAuth scopes each Web API method the emulator serves requires, so a missing scope fails a test the way
it fails in a real workspace (`missing_scope`, with `needed` and `provided`).

From the per-method `security` scopes of Slack's OpenAPI spec (../shared/specs/slack/slack_web_openapi_v2.json),
where any one listed scope suffices; its legacy `chat:write:bot`/`chat:write:user` are today's `chat:write` and
its `channels:write` is today's `channels:manage`. Methods newer than the spec (chat streaming,
`assistant.threads.*`) follow Slack's method reference pages (docs.slack.dev/reference/methods). An empty tuple
means no scope is needed.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.testing.slack_limits import ApiError

_HISTORY = ("channels:history", "groups:history", "im:history", "mpim:history")
_READ = ("channels:read", "groups:read", "im:read", "mpim:read")

METHOD_SCOPES: dict[str, tuple[str, ...]] = {
    "api.test": (),
    "auth.test": (),
    "chat.postMessage": ("chat:write",),
    "chat.update": ("chat:write",),
    "chat.delete": ("chat:write",),
    "chat.postEphemeral": ("chat:write",),
    "chat.getPermalink": (),
    "chat.startStream": ("chat:write",),
    "chat.appendStream": ("chat:write",),
    "chat.stopStream": ("chat:write",),
    "conversations.replies": _HISTORY,
    "conversations.history": _HISTORY,
    "conversations.info": _READ,
    "conversations.members": _READ,
    "conversations.list": _READ,
    "conversations.open": ("channels:manage", "groups:write", "im:write", "mpim:write"),
    "users.info": ("users:read",),
    "users.list": ("users:read",),
    "openid.connect.token": (),  # Sign in with Slack: the app's client credentials, no bot scope
    "openid.connect.userInfo": (),  # asked with the signed-in user's token
    "users.lookupByEmail": ("users:read.email",),
    "views.publish": (),
    "views.open": (),
    "views.push": (),
    "views.update": (),
    "reactions.add": ("reactions:write",),
    "reactions.remove": ("reactions:write",),
    "assistant.threads.setStatus": ("assistant:write",),
    "assistant.threads.setSuggestedPrompts": ("assistant:write",),
    "assistant.threads.setTitle": ("assistant:write",),
}


def check_scopes(method: str, granted: Iterable[str]) -> None:
    """Raise Slack's `missing_scope` unless `granted` holds one of the scopes `method` accepts."""
    needed = METHOD_SCOPES.get(method, ())
    held = sorted(granted)
    if needed and not set(needed) & set(held):
        raise ApiError("missing_scope", needed=",".join(needed), provided=",".join(held))
