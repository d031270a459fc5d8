"""The emulator's listing methods: cursor pagination, conversations.list, users.list, and the `oldest`/`latest`/
`inclusive` window that conversations.history and conversations.replies take.

From ../shared/specs/slack/slack_web_openapi_v2.json (`/conversations.list`, `/users.list`,
`/conversations.history`, `/conversations.replies`): an opaque `next_cursor` in `response_metadata` (empty on
the last page), `limit` capped at 1000, an unknown cursor answering `invalid_cursor`; `oldest` and `latest`
exclusive unless `inclusive` is set; conversations.list with a bot token lists public channels and only the
private channels the bot is a member of.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

from bot.testing.slack_limits import ApiError
from bot.testing.slack_workspace import SlackWorkspace

Params = dict[str, Any]
CONVERSATION_TYPES = {"public_channel", "private_channel", "im", "mpim"}


def cursor_for(key: str) -> str:
    return base64.b64encode(f"next_ts:{key.replace('.', '')}".encode()).decode()


def page(items: list[Any], params: Params, key: Callable[[Any], str], default_limit: int) -> tuple[list, str]:
    """Cursor pagination as Slack does it: opaque base64 cursor naming the first item of the next page."""
    limit = max(1, min(int(params.get("limit") or default_limit), 1000))
    start = 0
    cursor = params.get("cursor")
    if cursor:
        try:
            marker = base64.b64decode(cursor).decode().removeprefix("next_ts:")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise ApiError("invalid_cursor") from exc
        start = next((i for i, item in enumerate(items) if key(item).replace(".", "") == marker), -1)
        if start < 0:
            raise ApiError("invalid_cursor")
    found = items[start : start + limit]
    rest = items[start + limit :]
    return found, cursor_for(key(rest[0])) if rest else ""


def paged(key: str, found: list[Any], cursor: str) -> dict[str, Any]:
    body: dict[str, Any] = {key: found, "has_more": bool(cursor)}
    if cursor:
        body["response_metadata"] = {"next_cursor": cursor}
    return body


def in_window(messages: list[dict[str, Any]], params: Params) -> list[dict[str, Any]]:
    """The messages between `oldest` and `latest` (exclusive, unless `inclusive`), as Slack filters them."""
    inclusive = str(params.get("inclusive", "")).lower() in ("true", "1")
    try:
        oldest = float(params.get("oldest") or 0)
        latest = float(params["latest"]) if params.get("latest") else None
    except ValueError as exc:
        raise ApiError("invalid_ts_oldest") from exc

    def inside(ts: float) -> bool:
        after = ts >= oldest if inclusive else ts > oldest
        before = latest is None or (ts <= latest if inclusive else ts < latest)
        return after and before

    return [m for m in messages if inside(float(m["ts"]))]


def conversations_list(ws: SlackWorkspace, params: Params) -> dict[str, Any]:
    types = {t.strip() for t in str(params.get("types") or "public_channel").split(",") if t.strip()}
    if not types <= CONVERSATION_TYPES:
        raise ApiError("invalid_types")
    exclude_archived = str(params.get("exclude_archived", "")).lower() in ("true", "1")
    found = []
    for channel in sorted(ws.channels.values(), key=lambda c: c.id):
        kind = "im" if channel.is_im else "private_channel" if channel.is_private else "public_channel"
        if kind not in types or (kind != "public_channel" and ws.bot_user_id not in channel.members):
            continue
        if exclude_archived and channel.is_archived:
            continue
        found.append(channel.to_api(ws.bot_user_id))
    listed, cursor = page(found, params, lambda c: c["id"], default_limit=100)
    return {"channels": listed, "response_metadata": {"next_cursor": cursor}}


def users_list(ws: SlackWorkspace, params: Params) -> dict[str, Any]:
    users = [user.to_api() for user in sorted(ws.users.values(), key=lambda u: u.id)]
    listed, cursor = page(users, params, lambda u: u["id"], default_limit=100)
    return {"members": listed, "cache_ts": 0, "response_metadata": {"next_cursor": cursor}}
