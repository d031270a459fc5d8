"""`sleuth worker --processes N`, and the answering processes of `sleuth serve`: starts N single-process
workers and keeps them running until told to stop.

Each child is a whole `sleuth worker` of its own (its own database connections, its own heartbeat, its own
GIL), so the parent only starts, restarts and stops processes. A child that dies is restarted after a pause;
its claimed job is released by the replacement at start (same host, pid gone) or by its lease running out.
A child started by `sleuth serve` watches its parent and exits with it (`exit_with_parent`), so a killed
server leaves no answering orphan behind: its restart finds the jobs' workers dead and releases them at once.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time

log = logging.getLogger(__name__)

RESTART_PAUSE_S = 2.0
STOP_TIMEOUT_S = 30.0
PARENT_POLL_S = 0.5


def worker_command(threads: int, *, verbose: bool = False, parent: int | None = None) -> list[str]:
    """The command line of one `sleuth worker` process with `threads` job threads (`parent`: exit with it)."""
    command = [sys.executable, "-m", "bot.cli", "worker", "--processes", "1", "--threads", str(threads)]
    if parent is not None:
        command += ["--parent", str(parent)]
    return command + (["-v"] if verbose else [])


def supervise(
    command: list[str], processes: int, *, stop: threading.Event | None = None, signals: bool = True
) -> int:
    """Runs `processes` copies of `command` until SIGTERM/SIGINT (or `stop`); returns 0 after a clean stop.

    `signals=False` (a server running this in a thread of its own): the caller stops it with `stop`, and the
    children run in a session of their own, so a Ctrl-C reaches only the caller, which then stops them.
    """
    stop = stop or threading.Event()
    if signals:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(command, start_new_session=not signals)

    children = [start() for _ in range(processes)]
    while not stop.wait(RESTART_PAUSE_S):
        for i, child in enumerate(children):
            if child.poll() is not None:
                log.warning(
                    "worker process exited; restarting", extra={"pid": child.pid, "rc": child.returncode}
                )
                children[i] = start()
    for child in children:
        child.terminate()
    for child in children:
        try:
            child.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    return 0


def exit_with_parent(parent: int, *, poll_s: float = PARENT_POLL_S) -> threading.Thread:
    """Ends this process at once (as a kill would) when `parent` is gone: the jobs it held are then released
    by the restarted server's workers (their claimer's pid is dead) instead of being answered by an orphan."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)  # another process's life: there is nothing to wait on
        log.warning("parent process gone; worker exits", extra={"parent": parent})
        os._exit(1)

    thread = threading.Thread(target=watch, name="sleuth-parent-watch", daemon=True)
    thread.start()
    return thread
