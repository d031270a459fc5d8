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
CHUNKING_VERSION = 2  # part of the store's vector space: a change re-chunks and re-embeds on the next sync


@lru_cache(maxsize=1)
def _parsers() -> tuple[Any, Any]:
    # Imported lazily: llama-index takes a second to import and the bot's ack path never needs it.
    from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter

    return MarkdownNodeParser(), SentenceSplitter(chunk_size=CHUNK_TOKENS, chunk_overlap=CHUNK_OVERLAP)


MERGE_CHARS = 900  # markdown sections shorter than this are merged with their neighbours


def _split(text: str, *, markdown: bool) -> list[str]:
    from llama_index.core.schema import Document

    md, splitter = _parsers()
    if not markdown:
        return [n.get_content().strip() for n in splitter.get_nodes_from_documents([Document(text=text)])]
    # One node per heading section, then small neighbouring sections merged: a heading with two lines under it
    # is too little context to embed or to answer from.
    sections = [n.get_content().strip() for n in md.get_nodes_from_documents([Document(text=text)])]
    return [piece for section in _merge_small([s for s in sections if s]) for piece in _pack(section)]


_HEADING_LINE = re.compile(r"^#{1,6}\s+\S.*$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


def _pack(section: str) -> list[str]:
    """A section's lines packed into chunks of at most CHUNK_TOKENS. A line (a table row, a list item) is
    never cut; a continuation repeats the heading it sits under and, inside a table, the table's header row,
    so every chunk reads on its own ("Weight | 21.5 kg" stays under "Spec | Fen 3"). A paragraph longer than
    a chunk is split by sentences. Written here rather than with llama-index's splitters: they cut by tokens
    across lines, mid-row."""
    _, splitter = _parsers()
    count = splitter._tokenizer  # the splitter's own tokenizer: the same budget it would apply
    out: list[str] = []
    chunk: list[str] = []
    size = 0
    heading: str | None = None
    header: list[str] = []  # the current table's header row and separator

    def carried(for_row: bool) -> list[str]:
        return ([heading] if heading else []) + (header if for_row else [])

    lines = section.splitlines()
    for i, line in enumerate(lines):
        is_row = line.lstrip().startswith("|")
        if _HEADING_LINE.match(line):
            heading = line.strip()
        if not is_row:
            header = []
        elif not header and i + 1 < len(lines) and _TABLE_SEPARATOR.match(lines[i + 1]):
            header = [line, lines[i + 1]]
        n = len(count(line)) + 1
        if n > CHUNK_TOKENS:  # one long paragraph: by sentences, each piece under its heading
            if chunk:
                out.append("\n".join(chunk))
            pieces = [p.strip() for p in splitter.split_text(line) if p.strip()]
            out += ["\n".join([*carried(False), p]) if heading and p != heading else p for p in pieces]
            chunk, size = [], 0
            continue
        if chunk and size + n > CHUNK_TOKENS and not _TABLE_SEPARATOR.match(line):
            out.append("\n".join(chunk))
            chunk = [c for c in carried(is_row) if c != line]
            size = sum(len(count(c)) + 1 for c in chunk)
        chunk.append(line)
        size += n
    if chunk and any(c.strip() for c in chunk):
        out.append("\n".join(chunk).strip())
    return [c for c in out if c.strip()]


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
