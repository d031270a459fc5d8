"""Slack-side benchmark (not a test): ack latency and time to first thread status under concurrent questions.

`n` people mention Sleuth at once in #general of the local emulator; each POST's round trip is the ack latency
(the job is durably queued before the ack), and the first `assistant.threads.setStatus` (or placeholder) on each
thread is when the asker first sees Sleuth working. A question is two signed POSTs in sequence (`message`
and `app_mention`), so the ack figures cover both. Runs in a temporary data dir unless `rt` is given.
"""

from __future__ import annotations

import statistics
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bot.local_slack import GENERAL, add_people, local_bot
from bot.runtime import Runtime
from bot.settings import Settings
from bot.testing.slack_emulator import SlackEmulator

QUESTIONS = (
    "why did the 4.2 Android release slip?",
    "who's the person to chase at the supplier in OPS-31 about the shipment?",
    "what's our first response commitment for a P1 from an Enterprise customer?",
    "above what trip cost do I need my manager's pre-approval before booking?",
)
ANSWER_TIMEOUT_S = 600.0


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_slack_ack(n: int = 50, *, rt: Runtime | None = None, workers: int = 4) -> dict[str, Any]:
    """{"n", "ack_p50_ms", "ack_p99_ms", "ack_max_ms", "first_status_p50_ms", "first_status_p99_ms",
    "answered", "all_answered_s"}. With no `rt`, builds one on the examples (hash embedder) in a temp dir."""
    if rt is not None:
        return _run(rt, n, workers)
    with tempfile.TemporaryDirectory(prefix="sleuth-bench-slack-") as tmp:
        rt = Runtime(Settings(_env_file=None, data_dir=Path(tmp), embedder={"kind": "hash"}))
        rt.sync_service.run_all()
        try:
            return _run(rt, n, workers)
        finally:
            rt.engine.dispose()


def _run(rt: Runtime, n: int, workers: int) -> dict[str, Any]:
    with (
        SlackEmulator(team_id=f"TBENCH{uuid.uuid4().hex[:6].upper()}") as slack,
        local_bot(rt, slack, workers=workers),
    ):
        ids = list(add_people(slack, rt.settings.examples_dir / "people.json").values())
        sent: dict[str, float] = {}
        acks: list[float] = []

        def ask(i: int) -> None:
            start = time.monotonic()
            ts = slack.post_as_user(
                ids[i % len(ids)], GENERAL, f"<@{slack.bot_user_id}> {QUESTIONS[i % len(QUESTIONS)]}"
            )
            acks.append((time.monotonic() - start) * 1000)
            sent[ts] = start

        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=n) as pool:
            list(pool.map(ask, range(n)))
        first_seen = _watch_first_status(slack, set(sent), timeout_s=ANSWER_TIMEOUT_S)
        answered = slack.wait_for(lambda: _all_answered(slack, set(sent)), timeout=ANSWER_TIMEOUT_S)
        total_s = time.monotonic() - started
    first = [(first_seen[ts] - sent[ts]) * 1000 for ts in sent if ts in first_seen]
    return {
        "n": n,
        "workers": workers,
        "ack_p50_ms": round(statistics.median(acks), 1),
        "ack_p99_ms": round(_percentile(acks, 0.99), 1),
        "ack_max_ms": round(max(acks), 1),
        "first_status_p50_ms": round(statistics.median(first), 1) if first else None,
        "first_status_p99_ms": round(_percentile(first, 0.99), 1) if first else None,
        "answered": answered,
        "all_answered_s": round(total_s, 2),
    }


def _watch_first_status(slack: SlackEmulator, threads: set[str], *, timeout_s: float) -> dict[str, float]:
    """When each thread first showed a status or a placeholder (monotonic seconds)."""
    seen: dict[str, float] = {}

    def check() -> bool:
        now = time.monotonic()
        for ts in threads - set(seen):
            if slack.statuses(GENERAL, ts) or slack.bot_messages(GENERAL, ts):
                seen[ts] = now
        return len(seen) == len(threads)

    slack.wait_for(check, timeout=timeout_s)
    return seen


def _all_answered(slack: SlackEmulator, threads: set[str]) -> int:
    done = sum(1 for ts in threads if any(m.get("blocks") for m in slack.bot_messages(GENERAL, ts)))
    return done if done == len(threads) else 0
