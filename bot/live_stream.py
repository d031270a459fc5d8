"""The answer in its thread while the model writes it: each grounded sentence shown as soon as it is.

The flow hands a draft sink (`Investigator.ask(draft=...)`) the answer's grounded sentences so far, numbered
as the answer numbers them (`graph_flows.nodes.answer.Drafts`); an ungrounded sentence never reaches it. The
first draft starts the Slack stream (`chat.startStream`), each longer one appends what it adds; a draft that
does not go on from what is shown (a repair, a second composition) is not shown, and the checked answer settles
it at the end (`AnswerStream.deliver(shown=...)`): it goes on from the drafts, or replaces them.

Only where the audience is the thread before the answer exists (`live_allowed`): a DM, a channel whose answers
are for everyone in it, no private `reply` setting, no escalation buttons, not an edit or an answer nobody asked
for. A draft failing on Slack's side ends the drafts, never the answer; the job's saved result notes the stream
before it starts, as for a final stream, so a redelivered job finishes it instead of starting another.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from bot.audience import ChannelAudience
from bot.channels import ChannelConfig
from bot.jobs import EDIT, Job
from bot.render import answer_markdown
from bot.streaming import AnswerStream, Streamed, StreamUnavailable

log = logging.getLogger(__name__)


def live_allowed(job: Job, config: ChannelConfig, audience: ChannelAudience | None) -> bool:
    """Whether any answer to this job is for its thread, decided before the answer exists."""
    if job.unsolicited or job.kind == EDIT or config.escalate_to or config.reply == "ephemeral":
        return False
    return audience is None or audience.nameable(job.team, job.channel) is None  # nothing goes privately


class LiveStream:
    """The draft sink of one job's question. Called from the model's streaming thread, so it holds a lock;
    `close` ends the drafts before the answer is delivered (a call given up on may still write once)."""

    def __init__(self, stream: AnswerStream, job: Job, save: Callable[[dict[str, Any]], None]) -> None:
        self._stream, self._job, self._save = stream, job, save
        self._lock = threading.Lock()
        self._open = True
        self.state = Streamed()
        self.shown: str | None = ""  # what the stream holds; None once that is uncertain (a failed call)

    def __call__(self, draft: dict[str, Any]) -> None:
        with self._lock:
            if not self._open or self.shown is None or not self._stream.available:
                return
            text = answer_markdown(draft)
            if len(text) <= len(self.shown) or not text.startswith(self.shown):
                return  # nothing new, or not going on from what is shown: the checked answer settles it
            try:
                self._show(text)
            except StreamUnavailable as exc:  # refused: nothing posted, the answer is delivered as usual
                log.info("live answer stream refused", extra={"error": str(exc)})
                self.state = Streamed()
                self._save(self.state.saved())
                self._open = False
            except Exception:  # a draft never costs the answer: the final delivery finishes the stream
                log.exception("live answer stream failed; the answer finishes it")
                self.shown, self._open = None, False

    def _show(self, text: str) -> None:
        assert self.shown is not None
        if self.state.ts is None:
            self.state.started = True
            self._save(self.state.saved())
            self.state.ts = self._stream.start(self._job, text)
            self._save(self.state.saved())
        else:
            self._stream.append(self._job, self.state.ts, text[len(self.shown) :])
        self.shown = text

    def close(self) -> dict[str, Any]:
        """Ends the drafts; what the job's result keeps about the stream ({} when none was started)."""
        with self._lock:
            self._open = False
            return {"stream": self.state.saved()} if self.state.started else {}
