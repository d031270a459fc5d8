"""Slack's Socket Mode side of the emulator: a WebSocket server speaking Slack's envelope and ack protocol.

    app --apps.connections.open (app token)--> {"url": "ws://127.0.0.1:PORT/link/?ticket=..."}
    app --WebSocket--> server: {"type": "hello", "num_connections": 1, "connection_info": {...}}
    server -> app: {"envelope_id", "type": "events_api" | "interactive" | "slash_commands", "payload",
                    "accepts_response_payload", "retry_attempt", "retry_reason"}
    app -> server: {"envelope_id", "payload"?}                       (the ack, with a response payload or not)
    server -> app: {"type": "disconnect", "reason": "refresh_requested"}  (the app opens a new connection)

An envelope that is not acked within `ack_timeout_s` (the connection dropped, the app was slow) is sent again,
on whatever connection is live, with `retry_attempt` + 1 and `retry_reason` "timeout", as Slack does (up to
`MAX_RETRIES` times). Tickets are single-use, as Slack's are. The emulator routes deliveries here once
`SlackEmulator.connect_socket_mode` was called.

The app reaches the WebSocket through a TCP relay (`_Relay`), so a test can also drop a connection silently
(`stall_connections`: no bytes either way, nothing closed, as when a NAT forgets it): only pings reveal that.
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import Server, ServerConnection, serve

log = logging.getLogger(__name__)

ENVELOPE_TYPES = {"events": "events_api", "interactivity": "interactive", "commands": "slash_commands"}
ACK_TIMEOUT_S = 5.0
MAX_RETRIES = 3
CONNECT_WAIT_S = 30.0


class _Relay:
    """TCP from the app to the WebSocket server, byte for byte; a stalled pair carries nothing and stays open."""

    def __init__(self, target_port: int) -> None:
        self._target = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket, threading.Event]] = []
        threading.Thread(target=self._accept, name="slack-socket-relay", daemon=True).start()

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    def _accept(self) -> None:
        while True:
            try:
                app_side, _ = self._listener.accept()
            except OSError:
                return  # closed
            server_side = socket.create_connection(("127.0.0.1", self._target))
            stalled = threading.Event()
            with self._lock:
                self._pairs.append((app_side, server_side, stalled))
            for source, sink in ((app_side, server_side), (server_side, app_side)):
                threading.Thread(target=self._pump, args=(source, sink, stalled), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, stalled: threading.Event) -> None:
        try:
            while data := source.recv(65536):
                if not stalled.is_set():
                    sink.sendall(data)
        except OSError:
            pass
        if not stalled.is_set():  # a stalled pair never tells either side anything
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def stall(self) -> None:
        with self._lock:
            for _, _, stalled in self._pairs:
                stalled.set()

    def close(self) -> None:
        self._listener.close()
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for app_side, server_side, _ in pairs:
            app_side.close()
            server_side.close()


class SocketModeServer:
    def __init__(
        self,
        *,
        app_id: str,
        ack_timeout_s: float = ACK_TIMEOUT_S,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self._app_id, self.ack_timeout_s = app_id, ack_timeout_s
        self._on_change = on_change or (lambda: None)
        self._cond = threading.Condition()
        self._tickets: set[str] = set()
        self._live: list[ServerConnection] = []
        self._acks: dict[str, dict[str, Any]] = {}
        self._drop_after_send = 0
        self.connections_opened = 0
        self.envelopes: list[dict[str, Any]] = []  # everything sent, retries included
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._relay: _Relay | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------

    def start(self) -> SocketModeServer:
        sock = socket.create_server(("127.0.0.1", 0))
        self._server = serve(self._handle, sock=sock, ping_interval=None, compression=None)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="slack-socket-mode", daemon=True
        )
        self._thread.start()
        self._relay = _Relay(sock.getsockname()[1])
        return self

    def stop(self) -> None:
        if self._relay is not None:
            self._relay.close()
        if self._server is not None:
            self._server.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def new_url(self) -> str:
        """What `apps.connections.open` returns: a fresh single-use ticket."""
        if self._relay is None:
            raise RuntimeError("socket mode server is not started")
        ticket = secrets.token_hex(16)
        with self._cond:
            self._tickets.add(ticket)
        return f"ws://127.0.0.1:{self._relay.port}/link/?ticket={ticket}&app_id={self._app_id}"

    # -- connections -------------------------------------------------------------------------------------

    def _handle(self, conn: ServerConnection) -> None:
        ticket = (conn.request.path.split("ticket=", 1)[-1].split("&", 1)[0]) if conn.request else ""
        with self._cond:
            valid = ticket in self._tickets
            self._tickets.discard(ticket)
        if not valid:
            conn.close(code=1008, reason="invalid ticket")
            return
        conn.send(json.dumps(self._hello()))
        with self._cond:
            self._live.append(conn)
            self.connections_opened += 1
            self._cond.notify_all()
        self._on_change()
        try:
            for raw in conn:
                self._receive(raw)
        except ConnectionClosed:
            pass
        finally:
            with self._cond:
                if conn in self._live:
                    self._live.remove(conn)
                self._cond.notify_all()
            self._on_change()

    def _hello(self) -> dict[str, Any]:
        return {
            "type": "hello",
            "num_connections": len(self._live) + 1,
            "debug_info": {"host": "emulator", "approximate_connection_time": 18060},
            "connection_info": {"app_id": self._app_id},
        }

    def _receive(self, raw: str | bytes) -> None:
        try:
            message = json.loads(raw)
        except json.JSONDecodeError:
            log.warning("socket mode: undecodable message from the app")
            return
        envelope_id = message.get("envelope_id") if isinstance(message, dict) else None
        if not envelope_id:
            return
        with self._cond:
            self._acks[str(envelope_id)] = message.get("payload") or {}
            self._cond.notify_all()

    def wait_connected(self, timeout: float = CONNECT_WAIT_S, *, count: int = 1) -> None:
        """Blocks until the app holds a live connection (and has opened `count` in all)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._live or self.connections_opened < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("the app did not connect over socket mode")
                self._cond.wait(remaining)

    def drop_next_delivery(self) -> None:
        """The connection breaks right after the next envelope is sent, before its ack can arrive."""
        with self._cond:
            self._drop_after_send += 1

    def drop_connections(self) -> None:
        """The network drops every live connection (no close frame): the app must notice and reconnect."""
        with self._cond:
            live = list(self._live)
        for conn in live:
            self._cut(conn)

    def stall_connections(self) -> None:
        """Every live connection goes silent (no bytes either way, nothing closed); they are no longer live.
        The app notices only when its pings go unanswered, and must then open a new one."""
        if self._relay is not None:
            self._relay.stall()
        with self._cond:
            self._live.clear()
            self._cond.notify_all()

    def _cut(self, conn: ServerConnection) -> None:
        """Close the TCP connection under the WebSocket, without a close frame; it is no longer live."""
        with self._cond:
            if conn in self._live:
                self._live.remove(conn)
        with contextlib.suppress(OSError):
            conn.socket.shutdown(socket.SHUT_RDWR)
        conn.socket.close()

    def request_refresh(self, reason: str = "refresh_requested") -> None:
        """Slack's `disconnect` message: the app opens a new connection; this one closes shortly after."""
        with self._cond:
            live = list(self._live)
        for conn in live:
            conn.send(
                json.dumps({"type": "disconnect", "reason": reason, "debug_info": {"host": "emulator"}})
            )

    # -- delivering --------------------------------------------------------------------------------------

    def deliver(self, kind: str, payload: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        """Sends one envelope and waits for its ack, retrying as Slack does; (acked, the ack's payload)."""
        envelope_id = str(uuid.uuid4())
        attempt, deadline = 0, time.monotonic() + CONNECT_WAIT_S + (MAX_RETRIES + 1) * self.ack_timeout_s
        while attempt <= MAX_RETRIES and time.monotonic() < deadline:
            envelope = {
                "envelope_id": envelope_id,
                "type": ENVELOPE_TYPES[kind],
                "payload": payload,
                "accepts_response_payload": kind != "events",
                "retry_attempt": attempt,
                "retry_reason": "timeout" if attempt else "",
            }
            if not self._send(envelope):
                continue  # the connection was already gone: not an attempt, wait for the next one
            attempt += 1
            acked = self._wait_ack(envelope_id)
            if acked is not None:
                return True, acked
        return False, {}

    def deliver_raw(self, envelope: dict[str, Any]) -> bool:
        """Sends one envelope exactly as given (malformed ones too), once; whether the app acked it in time."""
        envelope_id = str(envelope.get("envelope_id") or uuid.uuid4())
        if not self._send(envelope):
            return False
        return self._wait_ack(envelope_id) is not None

    def _send(self, envelope: dict[str, Any]) -> bool:
        try:
            self.wait_connected()
        except TimeoutError:
            return False
        with self._cond:
            if not self._live:
                return False
            conn = self._live[-1]
            drop = self._drop_after_send > 0
            self._drop_after_send -= int(drop)
            self.envelopes.append(envelope)
        try:
            conn.send(json.dumps(envelope))
        except (ConnectionClosed, OSError):
            self._cut(conn)
            return False
        if drop:
            self._cut(conn)
        return True

    def _wait_ack(self, envelope_id: str) -> dict[str, Any] | None:
        deadline = time.monotonic() + self.ack_timeout_s
        with self._cond:
            while envelope_id not in self._acks:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(remaining)
            return self._acks.pop(envelope_id)
