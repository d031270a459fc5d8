"""A fake OpenAI-compatible chat server: `POST /v1/chat/completions` with OpenAI's response shape and `usage`.

Replies are scripted: a queue (`push`) consumed one per request, then `respond` (a function of the request
body) if set. A scripted reply is a string (the assistant content), a dict (sent as JSON content) or a `Reply`
with faults: an HTTP status with headers (429 + Retry-After, 500), a delay (held on an event that `close`
releases, so a timed-out client never keeps the test waiting), or a raw body (a broken HTTP payload).
Every request body is recorded in `requests`; a request with nothing scripted gets a 500 and is counted.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str | dict[str, Any] = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    raw_body: str | None = None
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens; estimated from characters if None


def content_of(reply: str | dict[str, Any] | Reply) -> Reply:
    if isinstance(reply, Reply):
        return reply
    return Reply(content=reply)


class FakeChatServer:
    def __init__(self, respond: Callable[[dict[str, Any]], Any] | None = None) -> None:
        self.respond = respond
        self.requests: list[dict[str, Any]] = []
        self.unscripted = 0
        self.errors: list[str] = []  # exceptions raised by `respond` (answered with a 500)
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def push(self, *replies: str | dict[str, Any] | Reply) -> None:
        with self._lock:
            self._queue.extend(content_of(r) for r in replies)

    def start(self) -> FakeChatServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def next_reply(self, body: dict[str, Any]) -> Reply | None:
        with self._lock:
            self.requests.append(body)
            if self._queue:
                return self._queue.popleft()
        if self.respond is not None:
            try:
                return content_of(self.respond(body))
            except Exception as exc:  # a broken script must fail the test, not hang the client
                self.errors.append(repr(exc))
                return Reply(status=500)
        self.unscripted += 1
        return None

    def wait(self, seconds: float) -> None:
        self._release.wait(seconds)


@contextmanager
def serve(respond: Callable[[dict[str, Any]], Any] | None = None) -> Iterator[FakeChatServer]:
    server = FakeChatServer(respond).start()
    try:
        yield server
    finally:
        server.close()


def completion(body: dict[str, Any], content: str, usage: tuple[int, int] | None) -> dict[str, Any]:
    prompt = usage[0] if usage else sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4
    done = usage[1] if usage else max(1, len(content) // 4)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1700000000,
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done},
    }


def _handler(fake: FakeChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                return
            body = json.loads(raw or b"{}")
            reply = fake.next_reply(body)
            if reply is None:
                self._send(500, {"error": {"message": "nothing scripted", "type": "server_error"}})
                return
            if reply.delay_s:
                fake.wait(reply.delay_s)
            if reply.status != 200:
                error = {"error": {"message": f"fake error {reply.status}", "type": "server_error"}}
                self._send(reply.status, error, reply.headers)
                return
            if reply.raw_body is not None:
                self._send_raw(200, reply.raw_body.encode(), reply.headers)
                return
            content = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
            self._send(200, completion(body, content, reply.usage), reply.headers)

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            self._send_raw(status, json.dumps(payload).encode(), headers or {})

        def _send_raw(self, status: int, data: bytes, headers: dict[str, str]) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up (a timeout test)

    return Handler
