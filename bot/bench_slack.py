"""Slack-side benchmark (not a test): ack latency, time to the first visible sign and time to the answer, with
`n` questions asked at once.

Sleuth runs as `sleuth serve` does in production, a process of its own (`bot.local_slack.serve_process`: the
HTTP intake, with its answering `sleuth worker` process beside it), so the CPU of the emulator and of the
`n` simulated people in this process is not counted as Sleuth's. `n` people mention Sleuth at once in #general
of the local emulator; each POST's round trip is the ack latency (the job is durably queued before the ack;
the placeholder is posted right after it). A watcher started before the first question records, per thread,
when Sleuth's first message or thread status appeared (the first visible sign) and when the answer did; both
are measured from the moment the person's message was sent. A question is two signed POSTs in sequence
(`message` and `app_mention`), so the ack figures cover both. One question answered first warms the server up
(`_warm_up`). Runs in a temporary data dir.
"""

from __future__ import annotations

import contextlib
import statistics
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bot.local_slack import GENERAL, add_people, serve_process
from bot.receipt import is_placeholder
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
WARM_UP_USER, WARM_UP_CHANNEL = "U0WARMUP", "C0WARMUP"


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_slack_ack(
    n: int = 50, *, workers: int = 4, processes: int = 1, api_latency_s: float = 0.0
) -> dict[str, Any]:
    """{"n", "workers", "worker_processes", "api_latency_ms", "ack_*_ms", "first_visible_*_ms",
    "visible", "placeholders", "visible_within_1s", "queued_placeholders", "answer_*_s", "answered", "all_answered_s"} for `sleuth serve
    --workers {workers} --worker-processes {processes}` on the examples (hash embedder). `api_latency_s`:
    every Web API call answers this late, as a Slack a network away does (the local emulator otherwise answers
    in about a millisecond)."""
    with tempfile.TemporaryDirectory(prefix="sleuth-bench-slack-") as tmp:
        settings = Settings(_env_file=None, data_dir=Path(tmp), embedder={"kind": "hash"})
        rt = Runtime(settings)
        rt.sync_service.run_all()  # indexed before the server starts, so it starts at once
        rt.engine.dispose()
        args = ("--workers", str(workers), "--worker-processes", str(processes))
        with SlackEmulator(
            team_id=f"TBENCH{uuid.uuid4().hex[:6].upper()}", api_latency_s=api_latency_s
        ) as slack:
            ids = list(add_people(slack, settings.examples_dir / "people.json").values())
            with serve_process(slack, Path(tmp), settings.examples_dir, args=args):
                _warm_up(slack)
                numbers = _run(slack, ids, n)
    return {"n": n, "workers": workers, "worker_processes": processes, **numbers}


def _warm_up(slack: SlackEmulator) -> None:
    """One question answered before the burst, so the numbers are those of a running server (its answering
    process started and loaded), asked by someone outside the burst (whose people's lookups stay uncached)."""
    slack.add_user(WARM_UP_USER, "warmup", real_name="Warm Up", email="warmup@acme.io")
    slack.add_channel(WARM_UP_CHANNEL, "warmup", members=[WARM_UP_USER])
    ts = slack.post_as_user(WARM_UP_USER, WARM_UP_CHANNEL, f"<@{slack.bot_user_id}> {QUESTIONS[0]}")

    def answered() -> bool:
        return any(
            m.get("blocks") and not is_placeholder(m.get("text", ""))
            for m in slack.bot_messages(WARM_UP_CHANNEL, ts)
        )

    slack.wait_for(answered, timeout=ANSWER_TIMEOUT_S)


class _Watcher:
    """Per thread of #general: when Sleuth's first message or status appeared, and when its answer did.

    Checked on every change the emulator makes, under its lock, so it copies nothing (the watcher must not slow
    down what it measures)."""

    def __init__(self, slack: SlackEmulator, n: int) -> None:
        self._slack, self._n = slack, n
        self.first: dict[str, float] = {}
        self.answered: dict[str, float] = {}
        self.queued: set[str] = set()
        self.placeholders: set[str] = set()  # the first sign was the intake's placeholder, not the answer
        self._thread = threading.Thread(target=self._watch, name="bench-watcher", daemon=True)

    def _check(self) -> bool:
        now = time.monotonic()
        for (channel, thread_ts), statuses in self._slack.workspace.statuses.items():
            if channel == GENERAL and any(statuses):
                self.first.setdefault(thread_ts, now)
        channel = self._slack.workspace.channels[GENERAL]  # read in place: wait_for holds the emulator's lock
        bot_id = self._slack.workspace.bot_id
        for message in channel.messages:
            thread_ts = message.get("thread_ts")
            if message.get("bot_id") != bot_id:
                continue
            if not thread_ts or thread_ts == message["ts"]:
                continue
            if thread_ts not in self.first and is_placeholder(message.get("text", "")):
                self.placeholders.add(thread_ts)
                if message["text"].startswith("Queued"):
                    self.queued.add(thread_ts)
            self.first.setdefault(thread_ts, now)
            if message.get("blocks") and not is_placeholder(message.get("text", "")):
                self.answered.setdefault(thread_ts, now)
        return len(self.answered) >= self._n

    def _watch(self) -> None:
        with contextlib.suppress(TimeoutError):
            self._slack.wait_for(self._check, timeout=ANSWER_TIMEOUT_S)

    def __enter__(self) -> _Watcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._thread.join(timeout=ANSWER_TIMEOUT_S)


def _ms(values: list[float], q: float) -> float | None:
    return round(_percentile(values, q) * 1000, 1) if values else None


def _run(slack: SlackEmulator, ids: list[str], n: int) -> dict[str, Any]:
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
    with _Watcher(slack, n) as watcher, ThreadPoolExecutor(max_workers=n) as pool:
        list(pool.map(ask, range(n)))
    total_s = time.monotonic() - started
    first = [watcher.first[ts] - sent[ts] for ts in sent if ts in watcher.first]
    answers = [watcher.answered[ts] - sent[ts] for ts in sent if ts in watcher.answered]
    return {
        "api_latency_ms": round(slack.api_latency_s * 1000),
        "ack_p50_ms": round(statistics.median(acks), 1),
        "ack_p99_ms": round(_percentile(acks, 0.99), 1),
        "ack_max_ms": round(max(acks), 1),
        "first_visible_p50_ms": _ms(first, 0.5),
        "first_visible_p99_ms": _ms(first, 0.99),
        "first_visible_max_ms": _ms(first, 1.0),
        "visible": len(first),
        "placeholders": len(watcher.placeholders),
        "visible_within_1s": sum(1 for f in first if f <= 1.0),
        "queued_placeholders": len(watcher.queued),
        "answer_p50_s": round(_percentile(answers, 0.5), 2) if answers else None,
        "answer_p99_s": round(_percentile(answers, 0.99), 2) if answers else None,
        "answered": len(answers),
        "all_answered_s": round(total_s, 2),
    }
