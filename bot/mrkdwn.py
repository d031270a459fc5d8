"""Slack mrkdwn text pieces for `render.py`: escaping, safe links, and cutting long text where Slack allows.

Every piece of source or model text leaves Sleuth through `escape` (mrkdwn: text, blocks, ephemeral messages,
App Home, modals) or `escape_markdown` (a `markdown_text` stream or markdown block): Slack's rule for its three
control characters (& < >), so `<!channel>`, `<!here>`, `<@U…>`, `<#C…>`, `<!subteam^…>` and `<url|label>`
in a document reach Slack as text; markdown's link syntax is escaped too. The only links in an answer are
Sleuth's own (`link`, `markdown_link`).

Pure functions of strings. A cut never falls inside an "atom": a link `<url|title>`, a citation `[n]` or an
entity `&amp;`, so a citation or a link is never split between two blocks.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_ATOM = re.compile(r"<[^<>\n]*>|\[\d+\]|&(?:amp|lt|gt);")
_SEPARATORS = ("\n\n", "\n", ". ", "; ", " ")
_URL_UNSAFE = {"|": "%7C", "<": "%3C", ">": "%3E", " ": "%20", "\n": "", "\r": ""}


def escape(text: str) -> str:
    """Slack's three control characters; every piece of source or model text goes through this."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_MARKDOWN_SPECIAL = str.maketrans({"\\": "\\\\", "[": "\\[", "]": "\\]"})


def escape_markdown(text: str) -> str:
    """Source or model text for markdown (Slack's `markdown_text`): `escape`, and backslashes before brackets,
    so no `[label](url)`, `![alt](url)` or `[ref]: url` in a document becomes a link."""
    return escape(text.translate(_MARKDOWN_SPECIAL))


def markdown_link(url: str | None, text: str) -> str:
    """`[text](url)` with `text` escaped, or just the escaped text when the URL is not linkable."""
    safe = safe_url(url)
    label = escape_markdown(text)
    return f"[{label}]({safe.replace('(', '%28').replace(')', '%29')})" if safe else label


def safe_url(url: str | None) -> str | None:
    """An http(s) URL fit for `<url|text>`, or None (other schemes, e.g. file://, are not linked)."""
    if not url:
        return None
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return None
    if scheme not in ("http", "https"):
        return None
    return "".join(_URL_UNSAFE.get(ch, ch) for ch in url)


def link(url: str | None, text: str) -> str:
    """`<url|text>` with `text` escaped, or just the escaped text when the URL is not linkable."""
    safe = safe_url(url)
    label = escape(text)
    return f"<{safe}|{label.replace('|', '¦')}>" if safe else label


def clip(text: str, limit: int, ellipsis: str = "…") -> str:
    """At most `limit` characters, cut at an allowed point, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[: _cut_point(text, limit - len(ellipsis))].rstrip() + ellipsis


def split(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` characters, cut at paragraph, line, sentence or word breaks."""
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        cut = _cut_point(rest, limit)
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return pieces


def _cut_point(text: str, limit: int) -> int:
    atoms = [(m.start(), m.end()) for m in _ATOM.finditer(text, 0, min(len(text), limit + 2000))]

    def inside(pos: int) -> bool:
        return any(start < pos < end for start, end in atoms)

    floor = limit // 3  # a break this early wastes a block; prefer a weaker separator later on
    for separator in _SEPARATORS:
        at = text.rfind(separator, 0, limit)
        while at > 0:
            pos = at + len(separator)
            if pos <= floor:
                break
            if pos <= limit and not inside(pos):
                return pos
            at = text.rfind(separator, 0, at)
    for start, end in atoms:
        if start < limit < end:
            return start if start > 0 else end  # an atom longer than the limit stays whole
    return limit


_FALLBACK = re.compile(r"<(?:!date\^[^|>]*|[^|>]*)\|([^>]*)>")
_MENTION = re.compile(r"<@([A-Z0-9]+)>")
_BOLD = re.compile(r"\*([^*\n]+)\*")


def plain(text: str) -> str:
    """mrkdwn for a terminal: links and dates as their fallback text, mentions as ids, no bold markers,
    entities unescaped."""
    text = _BOLD.sub(r"\1", _MENTION.sub(r"@\1", _FALLBACK.sub(r"\1", text)))
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
