"""`sleuth worker --processes N`: starts N single-process workers and keeps them running until told to stop.

Each child is a whole `sleuth worker` of its own (its own database connections, its own heartbeat), so the
parent only starts, restarts and stops processes. A child that dies is restarted after a pause; its claimed
job is released by the replacement at start (same host, pid gone) or by its lease running out.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import threading

log = logging.getLogger(__name__)

RESTART_PAUSE_S = 2.0
STOP_TIMEOUT_S = 30.0


def supervise(command: list[str], processes: int, *, stop: threading.Event | None = None) -> int:
    """Runs `processes` copies of `command` until SIGTERM/SIGINT (or `stop`); returns 0 after a clean stop."""
    stop = stop or threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    children = [subprocess.Popen(command) for _ in range(processes)]
    while not stop.wait(RESTART_PAUSE_S):
        for i, child in enumerate(children):
            if child.poll() is not None:
                log.warning(
                    "worker process exited; restarting", extra={"pid": child.pid, "rc": child.returncode}
                )
                children[i] = subprocess.Popen(command)
    for child in children:
        child.terminate()
    for child in children:
        try:
            child.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    return 0
