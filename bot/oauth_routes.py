"""The OAuth callback that Sleuth's HTTP server serves: `GET /oauth/callback?code=...&state=...`.

It only wires: the query goes to `AccountLinker.complete` (run in a worker thread, it does HTTP), the outcome
becomes a small HTML page. A forged, replayed or expired state gets one and the same page.
"""

from __future__ import annotations

import html
import logging

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from bot.identity import AccountLinker, InvalidLinkState, LinkFailed

log = logging.getLogger(__name__)

CALLBACK_PATH = "/oauth/callback"
INVALID_STATE_MESSAGE = (
    "This sign-in link is invalid or has expired. Go back to Slack and run `/sleuth link` to start again."
)
_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",  # the URL carries the authorization code
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
}


def oauth_routes(linker: AccountLinker) -> list[Route]:
    async def callback(request: Request) -> HTMLResponse:
        params = request.query_params
        try:
            result = await run_in_threadpool(
                linker.complete,
                state=params.get("state", ""),
                code=params.get("code"),
                error=params.get("error"),
            )
        except InvalidLinkState:
            log.warning("oauth callback with an invalid state")
            return render_page("Link failed", INVALID_STATE_MESSAGE, status_code=400)
        except LinkFailed as exc:
            log.warning("oauth link failed", extra={"source": exc.source, "reason": exc.reason})
            return render_page("Link failed", str(exc), status_code=400)
        return render_page("Linked", f"{result.message()} You can close this tab.")

    return [Route(CALLBACK_PATH, callback, methods=["GET"], name="oauth_callback")]


def render_page(title: str, message: str, status_code: int = 200) -> HTMLResponse:
    body = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>Sleuth · {html.escape(title)}</title>"
        "<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto}</style>"
        f"</head><body><h1>{html.escape(title)}</h1><p>{html.escape(message)}</p></body></html>"
    )
    return HTMLResponse(body, status_code=status_code, headers=_HEADERS)
