"""Plumbing shared by the fake source servers: a JSON reply, and a threaded server on 127.0.0.1:0."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


def take_fault(faults: list[Any], path: str) -> Any | None:
    """The first injected fault that applies to `path` (its own path prefix, or any), removed from the queue."""
    fault = next((f for f in faults if f.path is None or path.startswith(f.path)), None)
    if fault is not None:
        faults.remove(fault)
    return fault


def send_json(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: Any,
    headers: dict[str, str],
    *,
    content_type: str = "application/json",
) -> None:
    payload = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(payload)))
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(payload)


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Listens before the thread starts (nothing to wait for); yields the base URL; always shuts down."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


Reply = tuple[int, Any, dict[str, str]]  # status, JSON body, headers


def json_handler(
    fake: Any, fault_reply: Callable[[Any], Reply], *, content_type: str = "application/json"
) -> type[BaseHTTPRequestHandler]:
    """A GET-only handler for a fake source: records each request, answers an injected fault that applies
    (`fault_reply` words it the source's way), else `fake.route(path, query, authorization)`."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            with fake.lock:
                fake.requests.append(("GET", url.path, query))
                fault = take_fault(fake.faults, url.path)
                if fault is not None:
                    status, body, headers = fault_reply(fault)
                else:
                    status, body, headers = fake.route(url.path, query, self.headers.get("Authorization", ""))
            send_json(self, status, body, headers, content_type=content_type)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
