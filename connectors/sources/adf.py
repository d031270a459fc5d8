"""Atlassian document bodies to plain text: ADF (Jira v3 JSON) and Confluence storage
format (XHTML with `ac:` tags).

Both return the text plus what they point at (URLs, page titles, Jira keys), so mapping can build typed links.
Pure functions, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

_BLOCKS = {
    "paragraph",
    "heading",
    "blockquote",
    "codeBlock",
    "rule",
    "panel",
    "table",
    "tableRow",
    "mediaGroup",
}
_SPACE_RUNS = re.compile(r"[ \t]+")
_BLANK_RUNS = re.compile(r"\n{3,}")


@dataclass
class BodyContent:
    """Text of a body and the references found in it."""

    text: str = ""
    urls: list[str] = field(default_factory=list)
    page_titles: list[str] = field(default_factory=list)  # Confluence `ri:page` links
    jira_keys: list[str] = field(default_factory=list)  # Confluence Jira macros


def _tidy(text: str) -> str:
    lines = [_SPACE_RUNS.sub(" ", line).strip() for line in text.splitlines()]
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip()


def _adf_walk(node: Any, out: list[str], urls: list[str], depth: int) -> None:
    if isinstance(node, list):
        for child in node:
            _adf_walk(child, out, urls, depth)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    attrs = node.get("attrs") if isinstance(node.get("attrs"), dict) else {}
    if kind == "text" and isinstance(node.get("text"), str):
        out.append(node["text"])
        for mark in node.get("marks") or []:
            href = mark.get("attrs", {}).get("href") if isinstance(mark, dict) else None
            if mark.get("type") == "link" and isinstance(href, str):
                urls.append(href)
        return
    if kind == "hardBreak":
        out.append("\n")
    elif kind in ("mention", "status", "date") and isinstance(attrs.get("text"), str):
        out.append(attrs["text"])
    elif kind == "emoji" and isinstance(attrs.get("shortName"), str):
        out.append(attrs["shortName"])
    elif kind in ("inlineCard", "blockCard", "embedCard") and isinstance(attrs.get("url"), str):
        out.append(attrs["url"])
        urls.append(attrs["url"])
    elif kind == "listItem":
        out.append("\n" + "  " * depth + "- ")
    elif kind in ("tableCell", "tableHeader"):
        out.append(" | ")
    nested = depth + 1 if kind in ("bulletList", "orderedList") else depth
    _adf_walk(node.get("content"), out, urls, nested)
    if kind in _BLOCKS or kind in ("bulletList", "orderedList"):
        out.append("\n")


def adf_content(doc: Any) -> BodyContent:
    """ADF document (or None, or a legacy plain string) -> text and link URLs."""
    if doc is None:
        return BodyContent()
    if isinstance(doc, str):
        return BodyContent(text=_tidy(doc))
    out: list[str] = []
    urls: list[str] = []
    _adf_walk(doc, out, urls, 0)
    return BodyContent(text=_tidy("".join(out)), urls=urls)


def adf_to_text(doc: Any) -> str:
    return adf_content(doc).text


_STORAGE_BLOCKS = {
    "p",
    "div",
    "br",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "li",
    "tr",
    "pre",
    "blockquote",
    "table",
}


class _StorageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.content = BodyContent()
        self._macros: list[str] = []  # names of the open ac:structured-macro tags
        self._param: str | None = None  # name of the open ac:parameter

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "ac:structured-macro":
            self._macros.append(values.get("ac:name", ""))
        elif tag == "ac:parameter":
            self._param = values.get("ac:name", "")
        elif tag == "ri:page" and values.get("ri:content-title"):
            self.content.page_titles.append(values["ri:content-title"])
            self.out.append(values["ri:content-title"])
        elif tag == "ri:url" and values.get("ri:value"):
            self.content.urls.append(values["ri:value"])
        elif tag == "a" and values.get("href"):
            self.content.urls.append(values["href"])
        elif tag == "li":
            self.out.append("\n- ")
        elif tag in ("td", "th"):
            self.out.append(" | ")
        elif tag in _STORAGE_BLOCKS:
            self.out.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag in ("ac:structured-macro", "ac:parameter"):
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "ac:structured-macro" and self._macros:
            self._macros.pop()
        elif tag == "ac:parameter":
            self._param = None
        elif tag in _STORAGE_BLOCKS:
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if self._param is not None:
            if self._macros and self._macros[-1] == "jira" and self._param == "key" and data.strip():
                self.content.jira_keys.append(data.strip())
                self.out.append(data.strip())
            return  # other macro parameters are settings, not text
        self.out.append(data)

    def unknown_decl(self, data: str) -> None:
        if data.startswith("CDATA["):
            self.out.append(data[len("CDATA[") :])


def storage_content(xhtml: str) -> BodyContent:
    """Confluence storage format -> text, hyperlinks, linked page titles and Jira macro keys."""
    parser = _StorageParser()
    parser.feed(xhtml)
    parser.close()
    parser.content.text = _tidy("".join(parser.out))
    return parser.content
