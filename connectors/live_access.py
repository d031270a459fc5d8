"""The live access check as one asker: each document an answer shows is asked of its source with the asker's
own linked token, all of them in parallel under one short deadline (`graph_flows.access` says what the answer
does with the verdicts).

A source whose connector has no per-user check (`connectors.base.LiveAccess`; a folder) keeps its synced ACL
(`synced`). For one that has: the source answers (`open`, or `gone` for 403/404), or the check cannot complete
in time, fails (5xx, 401, 429) or has no token of the asker for that source (`unconfirmed`, unless
`LiveCheckConfig.unlinked` says to trust the synced ACL there).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from connectors.base import ConnectorError, LiveAccess

log = logging.getLogger(__name__)

OPEN, SYNCED, GONE, UNCONFIRMED = (
    "open",
    "synced",
    "gone",
    "unconfirmed",
)  # verdicts, as graph_flows.access reads them
MAX_PARALLEL = 8


class LiveCheckConfig(BaseModel):
    """`SLEUTH_LIVE_CHECK__*`: the check of cited documents with the asker's own account before posting."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = True
    deadline_s: float = Field(default=2.0, gt=0, le=30)  # for all of one answer's documents together
    # a checkable source the asker has not linked: "hide" (not shown, counted as unconfirmed) or "synced"
    # (trust the last permission sync there, as before the live check)
    unlinked: Literal["hide", "synced"] = "hide"


ConnectorOf = Callable[[str], object | None]  # a source's name -> its connector (None: not configured)


@dataclass(frozen=True)
class LiveCheck:
    """`graph_flows.access.AccessCheck` for one asker. `tokens`: their linked access tokens by source name."""

    connector_of: ConnectorOf
    tokens: Callable[[], Mapping[str, str]]  # asked only when a shown document's source has a live check
    config: LiveCheckConfig = field(default_factory=LiveCheckConfig)

    def __call__(self, doc_ids: Sequence[str]) -> dict[str, str]:
        started = time.monotonic()
        verdicts: dict[str, str] = {}
        asks: dict[str, tuple[LiveAccess, str]] = {}
        tokens: Mapping[str, str] | None = None
        for doc_id in dict.fromkeys(doc_ids):
            source = doc_id.split(":", 1)[0]
            connector = self.connector_of(source)
            if not isinstance(connector, LiveAccess):
                verdicts[doc_id] = SYNCED
                continue
            tokens = self.tokens() if tokens is None else tokens
            if source in tokens:
                asks[doc_id] = (connector, tokens[source])
            else:
                verdicts[doc_id] = SYNCED if self.config.unlinked == "synced" else UNCONFIRMED
        verdicts |= self._ask(asks)
        log.info(
            "live access checked",
            extra={
                "docs": len(verdicts),
                "asked": len(asks),
                "gone": sum(v == GONE for v in verdicts.values()),
                "unconfirmed": sum(v == UNCONFIRMED for v in verdicts.values()),
                "ms": round((time.monotonic() - started) * 1000),
            },
        )
        return verdicts

    def _ask(self, asks: Mapping[str, tuple[LiveAccess, str]]) -> dict[str, str]:
        """Every source asked at once; what has not answered by the deadline is unconfirmed."""
        if not asks:
            return {}
        deadline = self.config.deadline_s
        pool = ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(asks)), thread_name_prefix="live-access")
        try:
            futures = {
                pool.submit(_verdict, connector, doc_id, token, deadline): doc_id
                for doc_id, (connector, token) in asks.items()
            }
            done, _ = wait(futures, timeout=deadline)
            return {doc_id: f.result() if f in done else UNCONFIRMED for f, doc_id in futures.items()}
        finally:
            pool.shutdown(wait=False, cancel_futures=True)  # a late answer is not waited for


def _verdict(connector: LiveAccess, doc_id: str, token: str, timeout_s: float) -> str:
    try:
        return OPEN if connector.can_open(doc_id, token, timeout_s=timeout_s) else GONE
    except (ConnectorError, ValueError) as exc:
        log.warning("live access unconfirmed", extra={"source": connector.name, "error": type(exc).__name__})
        return UNCONFIRMED
