"""`sleuth bench --slack` end to end on a small burst: `sleuth serve` as its own process (answering in its child
worker process) against the emulator; every question is acknowledged visibly and answered. Nothing here
depends on timing: the speed goal is the bench's to report."""

from __future__ import annotations

from bot.bench_slack import bench_slack_ack

N = 4


def test_a_small_burst_is_acknowledged_and_answered() -> None:
    numbers = bench_slack_ack(N, workers=2)
    assert numbers["n"] == N and numbers["worker_processes"] == 1
    assert numbers["answered"] == N
    assert numbers["visible"] == N
    assert numbers["placeholders"] == N  # in every thread the intake's placeholder came before the answer
    assert numbers["ack_max_ms"] > 0 and numbers["first_visible_max_ms"] is not None
