"""Answering processes started by `sleuth serve` never outlive it; the worker command names its parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from bot.supervisor import worker_command

CHILD = textwrap.dedent(
    """
    import os, sys, time
    from bot.supervisor import exit_with_parent
    print(os.getpid(), flush=True)
    exit_with_parent(int(sys.argv[1]), poll_s=0.05)  # as `sleuth worker --parent PID` (maybe gone already)
    time.sleep(120)
    """
)
PARENT = textwrap.dedent(
    """
    import os, subprocess, sys
    # shares our stdout, and outlives us without the watch
    subprocess.Popen([sys.executable, "-c", sys.argv[1], str(os.getpid())])
    """
)
EXIT_BUDGET_S = 60.0  # a deadline for a hang, not a speed goal


def test_a_worker_exits_when_the_server_that_started_it_is_gone() -> None:
    # Our stdout pipe ends only when every process holding it exited: the parent at once, the child by its watch.
    parent = subprocess.Popen([sys.executable, "-c", PARENT, CHILD], stdout=subprocess.PIPE, text=True)
    try:
        out, _ = parent.communicate(timeout=EXIT_BUDGET_S)
    except subprocess.TimeoutExpired:
        parent.kill()
        out = parent.stdout.read() if parent.stdout else ""
        for pid in out.split():
            os.kill(int(pid), signal.SIGKILL)
        raise AssertionError("the child outlived its parent") from None
    assert out.strip().isdigit()  # the child did start, and is gone


def test_the_worker_command_passes_the_parent_and_verbosity() -> None:
    command = worker_command(2, verbose=True, parent=4242)
    assert command[:3] == [sys.executable, "-m", "bot.cli"]
    assert command[3:] == ["worker", "--processes", "1", "--threads", "2", "--parent", "4242", "-v"]
    assert "--parent" not in worker_command(2)
