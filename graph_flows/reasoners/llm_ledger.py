"""What one question cost and what went wrong: for the trace, the footer and the bench."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

MAX_LEDGERS = 512


@dataclass
class Ledger:
    """What one question cost and what went wrong, for the trace and the bench."""

    run: str
    calls: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False  # some reply had no usage metadata; tokens estimated from characters
    unavailable: str | None = None  # set once the model refused or stayed down: later steps skip it
    timeouts: int = 0  # calls given up on (their streams closed); never disables the model
    compact: bool = False  # the window is too small for the shared system prompt: each step's own from now on
    deadline: float | None = None  # monotonic time by which the question's last call must end
    steps: int = 0  # steps asked of the model (plan, each reflect, compose)
    offline_added: int = 0  # aspects and sentences the second reader added to the model's (`llm_merge`)
    offline_established: dict[str, list[str]] = field(default_factory=dict)  # the second reader's, last round
    fallbacks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    flagged: set[str] = field(default_factory=set)  # evidence ids already noted as instruction-like
    held: set[str] = field(default_factory=set)  # aspects held open a round (`llm_relevance.held_open`)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def usage(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "retries": self.retries,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "tokens": self.tokens,
            "estimated": self.estimated,
            "steps": self.steps,
            "fallbacks": list(self.fallbacks),
            "fallback_rate": round(len(self.fallbacks) / self.steps, 2) if self.steps else 0.0,
            "offline_added": self.offline_added,
            "timeouts": self.timeouts,
        }


class Ledgers:
    """Ledgers by question run id, bounded (oldest dropped) and safe to share between worker threads."""

    def __init__(self, size: int = MAX_LEDGERS) -> None:
        self._size = size
        self._items: OrderedDict[str, Ledger] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, run: str) -> Ledger:
        with self._lock:
            ledger = self._items.get(run)
            if ledger is None:
                ledger = self._items[run] = Ledger(run=run)
                while len(self._items) > self._size:
                    self._items.popitem(last=False)
            return ledger
