"""Splits documents into chunks with llama-index node parsers: markdown-aware for pages, one node per ticket
body or comment (tickets arrive with comments separated by the connector), whole short passages as they are.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from connectors.base import SourceDoc
from connectors.text import split_comments

CHUNK_TOKENS = 220  # all-MiniLM-L6-v2 reads 256 word pieces; leave room for the title line
CHUNK_OVERLAP = 30


@lru_cache(maxsize=1)
def _parsers() -> tuple[Any, Any]:
    # Imported lazily: llama-index takes a second to import and the bot's ack path never needs it.
    from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter

    return MarkdownNodeParser(), SentenceSplitter(chunk_size=CHUNK_TOKENS, chunk_overlap=CHUNK_OVERLAP)


MERGE_CHARS = 900  # markdown sections shorter than this are merged with their neighbours


def _split(text: str, *, markdown: bool) -> list[str]:
    from llama_index.core.schema import Document

    md, splitter = _parsers()
    docs = [Document(text=text)]
    if markdown:
        # One node per heading section, then small neighbouring sections merged: a heading with two lines
        # under it is too little context to embed or to answer from.
        sections = [n.get_content().strip() for n in md.get_nodes_from_documents(docs)]
        docs = [Document(text=t) for t in _merge_small([s for s in sections if s])]
    out: list[str] = []
    for doc in docs:
        section = doc.text
        for i, node in enumerate(splitter.get_nodes_from_documents([doc])):
            piece = node.get_content().strip()
            if not piece:
                continue
            heading = _heading_before(section, piece) if markdown and i else None
            if heading and not piece.startswith("#"):
                piece = f"{heading}\n{piece}"  # a continuation keeps the heading it sits under
            out.append(piece)
    return out


_HEADING_LINE = re.compile(r"^#{1,6}\s+\S.*$", re.MULTILINE)


def _heading_before(section: str, piece: str) -> str | None:
    """The last heading line of `section` above where `piece` starts (by its first line)."""
    first = piece.splitlines()[0][:60]
    at = section.find(first)
    if at <= 0:
        return None
    above = _HEADING_LINE.findall(section[:at])
    return above[-1].strip() if above else None


def _merge_small(sections: list[str]) -> list[str]:
    merged: list[str] = []
    for section in sections:
        if merged and len(merged[-1]) + len(section) < MERGE_CHARS:
            merged[-1] = f"{merged[-1]}\n\n{section}"
        else:
            merged.append(section)
    return merged


def chunk_texts(doc: SourceDoc) -> list[str]:
    """The chunk texts of one document, in order. Never empty for a non-empty document."""
    text = doc.text.strip()
    if not text:
        return [doc.title]
    if doc.kind == "passage" and len(text) < 1200:
        return [text]
    if doc.kind in {"ticket", "issue", "pull_request"}:
        parts = split_comments(text)
        return [piece for part in parts for piece in _split(part, markdown=False)]
    return _split(text, markdown=True)
