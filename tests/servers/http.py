"""Plumbing shared by the fake source servers: a JSON reply, and a threaded server on 127.0.0.1:0."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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
