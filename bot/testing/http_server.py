"""Serve an ASGI app (the Bolt app's Starlette wrapper, a fake source) on 127.0.0.1 for the length of a test.

uvicorn runs in a thread on a socket we bind first (port 0), so the port is known before it starts, and we
wait on uvicorn's own startup, with a deadline, instead of sleeping.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

STARTUP_TIMEOUT_S = 10.0
SHUTDOWN_TIMEOUT_S = 10.0


class _ThreadServer(uvicorn.Server):
    """A uvicorn server that tells the starting thread when it is up (or has given up)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets=sockets)
        finally:
            self.ready.set()


@contextmanager
def serve_asgi(app: Any, *, log_level: str = "warning") -> Iterator[str]:
    """Yield the base URL ("http://127.0.0.1:PORT") while `app` is served; stop and close on exit."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level=log_level, lifespan="off", access_log=False)
    server = _ThreadServer(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="asgi-server", daemon=True)
    thread.start()
    try:
        if not server.ready.wait(STARTUP_TIMEOUT_S) or not server.started:
            raise RuntimeError(f"ASGI server did not start within {STARTUP_TIMEOUT_S}s")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=SHUTDOWN_TIMEOUT_S)
        sock.close()
