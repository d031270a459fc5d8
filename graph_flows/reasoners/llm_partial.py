"""The compose reply while the model writes it: each sentence object the JSON has closed, grounded as the whole
reply will be, handed on, so an asker can read the answer before the model has finished.

The reply is JSON (`ComposeOut`) written a few characters at a time; a sentence is whole once its object in
`sentences` is closed. The sentences so far go through `composition_from`, the same checks the finished reply
gets (unknown ids, a quote not in its passage, text written to an assistant, the answer's shape), so a sentence
is handed on only once it is grounded; an ungrounded one is never handed on. What is handed on is a draft: the
program's own checks of the finished answer (`nodes.answer`) still decide what is finally shown.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from graph_flows.reasoners.base import ComposedSentence
from graph_flows.reasoners.llm_mapping import composition_from
from graph_flows.reasoners.llm_schemas import ComposeOut
from graph_flows.state import Evidence

log = logging.getLogger(__name__)

SentenceSink = Callable[[list[ComposedSentence]], None]  # the grounded sentences so far, in order
_SENTENCES = re.compile(r'"sentences"\s*:\s*\[')
_DECODER = json.JSONDecoder()


def closed_sentences(text: str) -> list[dict[str, Any]]:
    """The sentence objects the (partial) reply has closed, in order; an open one is not among them."""
    found = _SENTENCES.search(text)
    if found is None:
        return []
    out: list[dict[str, Any]] = []
    at = found.end()
    while True:
        while at < len(text) and text[at] in " \t\r\n,":
            at += 1
        if at >= len(text) or text[at] != "{":
            return out
        try:
            item, at = _DECODER.raw_decode(text, at)
        except json.JSONDecodeError:
            return out  # still being written
        if isinstance(item, dict):
            out.append(item)


class GroundedDrafts:
    """A text sink for `ModelClient.ask`: hands `sink` the grounded sentences each time one more is closed.
    Only a change is handed on; a sink that fails is logged and dropped: a draft never costs the answer."""

    def __init__(
        self,
        plan: dict[str, Any],
        evidence: Sequence[Evidence],
        sink: SentenceSink,
        similar: Callable[[str, str], float] | None = None,
    ) -> None:
        self._plan, self._evidence, self._similar = plan, evidence, similar
        self._sink: SentenceSink | None = sink
        self._closed = 0
        self._length = 0
        self._handed: list[tuple[str, tuple[str, ...]]] = []  # what the sink was last handed

    def __call__(self, text: str) -> None:
        if self._sink is None:
            return
        try:
            self._update(text)
        except Exception:  # the sink is the caller's (a Slack stream): never the model call's failure
            log.exception("draft failed; no more drafts for this answer")
            self._sink = None

    def _update(self, text: str) -> None:
        if len(text) < self._length:  # a new call (a retry, a repair) writes its reply from the start
            self._closed = 0
        self._length = len(text)
        objects = closed_sentences(text)
        if len(objects) <= self._closed:
            return
        self._closed = len(objects)
        try:  # an item that cannot be read is dropped, as in the finished reply
            out = ComposeOut.model_validate({"sentences": objects})
        except ValidationError:
            return
        composition, _ = composition_from(out, self._plan, self._evidence, [], self._similar)
        handed = [(c.text, tuple(c.cites)) for c in composition.sentences]
        if handed and handed != self._handed and self._sink is not None:
            self._handed = handed
            self._sink(composition.sentences)
