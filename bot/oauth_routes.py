"""The OAuth callback that Sleuth's HTTP server serves: `GET /oauth/callback?code=...&state=...`.

It only wires: the query goes to `AccountLinker.complete` (run in a worker thread, it does HTTP), the outcome
becomes a small HTML page. A forged, replayed or expired state gets one and the same page.

For sources bound by a Slack sign-in, `/oauth/slack/start?link=...` gives the browser a secret cookie and sends
it to Slack; `/oauth/slack/callback` has Slack say who signed in and, if it is the person who asked, sends the
browser on to the provider; the provider's callback then requires the same cookie.
"""

from __future__ import annotations

import html
import logging
from typing import TypedDict

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from bot.identity import AccountLinker, InvalidLinkState, LinkFailed

log = logging.getLogger(__name__)

CALLBACK_PATH = "/oauth/callback"
SLACK_START_PATH, SLACK_CALLBACK_PATH = "/oauth/slack/start", "/oauth/slack/callback"
COOKIE = "sleuth_link"
INVALID_STATE_MESSAGE = (
    "This sign-in link is invalid or has expired. Go back to Slack and run `/sleuth link` to start again."
)
_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",  # the URL carries the authorization code
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
}


class _Returned(TypedDict):
    state: str
    code: str | None
    error: str | None
    browser: str | None


def _returned(request: Request) -> _Returned:
    """What the provider (or Slack) sends the browser back with, and the sign-in cookie that browser holds."""
    params = request.query_params
    return _Returned(
        state=params.get("state", ""),
        code=params.get("code"),
        error=params.get("error"),
        browser=request.cookies.get(COOKIE),
    )


def oauth_routes(linker: AccountLinker) -> list[Route]:
    async def callback(request: Request) -> HTMLResponse:
        try:
            result = await run_in_threadpool(linker.complete, **_returned(request))
        except InvalidLinkState:
            log.warning("oauth callback with an invalid state")
            return render_page("Link failed", INVALID_STATE_MESSAGE, status_code=400)
        except LinkFailed as exc:
            log.warning("oauth link failed", extra={"source": exc.source, "reason": exc.reason})
            return render_page("Link failed", str(exc), status_code=400)
        return render_page("Linked", f"{result.message()} You can close this tab.")

    async def slack_start(request: Request) -> Response:
        try:
            url, secret = await run_in_threadpool(linker.begin_proof, request.query_params.get("link", ""))
        except InvalidLinkState:
            return render_page("Link failed", INVALID_STATE_MESSAGE, status_code=400)
        response = RedirectResponse(url, status_code=302, headers=_HEADERS)
        response.set_cookie(
            COOKIE,
            secret,
            max_age=600,
            path="/oauth",
            httponly=True,
            samesite="lax",  # sent on the top-level returns from Slack and the provider
            secure=request.url.scheme == "https",
        )
        return response

    async def slack_callback(request: Request) -> Response:
        try:
            url = await run_in_threadpool(linker.finish_proof, **_returned(request))
        except InvalidLinkState:
            return render_page("Link failed", INVALID_STATE_MESSAGE, status_code=400)
        except LinkFailed as exc:
            log.warning("slack sign-in for a link failed", extra={"source": exc.source, "reason": exc.reason})
            return render_page("Link failed", str(exc), status_code=400)
        return RedirectResponse(url, status_code=302, headers=_HEADERS)

    return [
        Route(CALLBACK_PATH, callback, methods=["GET"], name="oauth_callback"),
        Route(SLACK_START_PATH, slack_start, methods=["GET"], name="oauth_slack_start"),
        Route(SLACK_CALLBACK_PATH, slack_callback, methods=["GET"], name="oauth_slack_callback"),
    ]


def render_page(title: str, message: str, status_code: int = 200) -> HTMLResponse:
    body = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>Sleuth · {html.escape(title)}</title>"
        "<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto}</style>"
        f"</head><body><h1>{html.escape(title)}</h1><p>{html.escape(message)}</p></body></html>"
    )
    return HTMLResponse(body, status_code=status_code, headers=_HEADERS)
