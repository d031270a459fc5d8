"""Names and summarises a theme with the configured model (`sleuth themes --name`).

The model proposes a short label and a two-sentence summary from a theme's key terms and its central passages;
the store keeps both with the passages they were written from (connectors.knowledge.themes), so a summary is
shown only to someone who may open every one of them, and only while they are unchanged. Without a model the
themes keep their offline labels (key terms).
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Annotated

from pydantic import Field

from graph_flows.reasoners.base import ReasonerError
from graph_flows.reasoners.llm_client import Ledger, ModelClient
from graph_flows.reasoners.llm_schemas import _clip, _Lenient
from graph_flows.reasoners.prompts import _COMMON, DATA_CLOSE, DATA_OPEN

log = logging.getLogger(__name__)

PASSAGE_CHARS = 700
THEME = (
    _COMMON
    + """
Task: name a theme. The passages below belong together in a company's knowledge base. Give the theme a short
label (2-6 words, what the passages are about) and a summary of at most two sentences that says what they
cover. Use only what the passages say.
Shape: {"label": str, "summary": str}"""
)


class ThemeNameOut(_Lenient):
    label: Annotated[str, _clip(60)] = Field(min_length=1)
    summary: Annotated[str, _clip(400)] = ""


class ModelThemeNamer:
    """A `connectors.knowledge.themes.Namer` backed by the configured chat model."""

    def __init__(self, client: ModelClient) -> None:
        self._client = client

    def __call__(self, terms: list[str], texts: list[str]) -> tuple[str, str] | None:
        ledger = Ledger(run=f"theme:{uuid.uuid4().hex[:8]}")
        self._client.start(ledger)
        passages = json.dumps([t[:PASSAGE_CHARS] for t in texts], ensure_ascii=False, indent=0)
        user = f"Key terms: {', '.join(terms)}\n{DATA_OPEN}\n{passages}\n{DATA_CLOSE}"
        try:
            out = self._client.ask(ledger, THEME, user, ThemeNameOut, step="name_theme")
        except ReasonerError as exc:
            log.warning("theme not named", extra={"error": exc.__class__.__name__})
            return None
        return out.label, out.summary
