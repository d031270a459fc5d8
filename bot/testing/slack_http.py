"""The emulator's HTTP front: turns requests on /api/<method>, /response/<id> and Sign in with Slack's
/openid/connect/authorize into backend calls."""

from __future__ import annotations

import base64
import json
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

Reply = tuple[int, dict[str, Any], dict[str, str]]


class ApiBackend(Protocol):
    def handle_api(self, method: str, params: dict[str, Any], token: str | None) -> Reply: ...

    def handle_response_url(self, url_id: str, body: dict[str, Any]) -> Reply: ...

    def handle_oidc_authorize(
        self, query: dict[str, Any], login: str | None
    ) -> tuple[int, dict[str, str]]: ...


def _read_params(handler: BaseHTTPRequestHandler) -> dict[str, Any]:
    """Query string plus a JSON or form-encoded body, as Slack accepts either."""
    params: dict[str, Any] = dict(parse_qsl(urlsplit(handler.path).query, keep_blank_values=True))
    length = int(handler.headers.get("Content-Length") or 0)
    raw = handler.rfile.read(length) if length else b""
    content_type = handler.headers.get("Content-Type", "")
    if raw and content_type.startswith("application/json"):
        body = json.loads(raw)
        if isinstance(body, dict):
            params.update(body)
    elif raw:
        params.update(parse_qsl(raw.decode(), keep_blank_values=True))
    return params


def make_handler(emulator: ApiBackend) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            path = urlsplit(self.path).path
            try:
                params = _read_params(self)
            except (json.JSONDecodeError, UnicodeDecodeError):
                self._send(200, {"ok": False, "error": "invalid_json"}, {})
                return
            if path.startswith("/api/"):
                auth = self.headers.get("Authorization", "")
                token = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else None
                if auth.startswith("Basic "):  # oauth.v2.access / openid.connect.token: client credentials
                    client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
                    params.setdefault("client_id", client_id)
                    params.setdefault("client_secret", secret)
                token = token or params.pop("token", None)
                params.pop("token", None)
                self._send(*emulator.handle_api(path.removeprefix("/api/"), params, token))
            elif path == "/openid/connect/authorize":
                status, headers = emulator.handle_oidc_authorize(params, self.headers.get("X-Test-Login"))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif path.startswith("/response/"):
                self._send(*emulator.handle_response_url(path.removeprefix("/response/"), params))
            else:
                self._send(404, {"ok": False, "error": "not_found"}, {})

        do_GET = _answer
        do_POST = _answer

        def _send(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (a `slow_next` fault): that is the point

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests read `emulator.calls`, not the access log."""

    return Handler
